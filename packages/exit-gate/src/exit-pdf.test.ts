import { gradcheck, tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { exitPdf } from "./exit-pdf.js";

const logit = (l: number) => Math.log(l / (1 - l));

describe("exitPdf", () => {
  it("hand-computed example: p(r) = λ(r)·S(r−1), p(R) = S(R−1)", () => {
    // One token, λ = (0.5, 0.2, 0.9): p = (0.5, 0.2·0.5, 0.8·0.5) = (0.5, 0.1, 0.4); λ(3) unused.
    const a = tensor([0.5, 0.2, 0.9].map(logit), [3, 1]);
    const p = exitPdf(a);
    expect(p.shape).toEqual([3, 1]);
    expect(Array.from(p.data)).toEqual([
      expect.closeTo(0.5, 7),
      expect.closeTo(0.1, 7),
      expect.closeTo(0.4, 7),
    ]);
  });

  it("R = 1 puts all mass on the only step", () => {
    const p = exitPdf(tensor([3, -2, 0], [1, 3]));
    expect(Array.from(p.data)).toEqual([1, 1, 1]);
  });

  it("sums to 1 over steps, also for extreme logits", () => {
    const a = randn([6, 4, 7], 3, { std: 4 });
    a.data[0] = 80;
    a.data[28] = -80;
    a.data[56] = 1e4;
    const p = exitPdf(a);
    const M = 28;
    for (let m = 0; m < M; m++) {
      let s = 0;
      for (let r = 0; r < 6; r++) {
        const v = p.data[r * M + m]!;
        expect(v).toBeGreaterThanOrEqual(0);
        s += v;
      }
      expect(s).toBeCloseTo(1, 6);
    }
  });

  it("gradient", () => {
    const a = randn([4, 2, 3], 7);
    gradcheck(() => exitPdf(a), [a]);
  });

  it("last step's λ gets no gradient", () => {
    const a = randn([3, 5], 8);
    gradcheck(() => exitPdf(a), [a]);
    expect(Array.from(a.grad!.subarray(10))).toEqual([0, 0, 0, 0, 0]);
  });

  it("rejects a scalar", () => {
    expect(() => exitPdf(tensor([], [0]))).toThrow(/gateLogits must be \[R, \.\.\.\] with R ≥ 1/);
  });
});
