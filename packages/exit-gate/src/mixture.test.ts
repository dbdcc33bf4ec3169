import { gradcheck, tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { exitPdf } from "./exit-pdf.js";
import { mixtureLogits, mixtureLogProbs } from "./mixture.js";

const R = 3;
const V = 5;
const logits = [0, 1, 2].map((r) => randn([2, 3, V], 60 + r));
const a = randn([R, 2, 3], 70);

function plainSoftmax(x: ArrayLike<number>, o: number, n: number): number[] {
  const row = Array.from({ length: n }, (_, j) => x[o + j]!);
  const mx = Math.max(...row);
  const e = row.map((v) => Math.exp(v - mx));
  const s = e.reduce((p, q) => p + q, 0);
  return e.map((v) => v / s);
}

describe("mixtureLogits", () => {
  it("is Σ_r p(r)·logits(r)", () => {
    const p = exitPdf(a);
    const y = mixtureLogits(logits, p);
    expect(y.shape).toEqual([2, 3, V]);
    for (let m = 0; m < 6; m++) {
      for (let v = 0; v < V; v++) {
        let want = 0;
        for (let r = 0; r < R; r++) want += p.data[r * 6 + m]! * logits[r]!.data[m * V + v]!;
        expect(y.data[m * V + v]).toBeCloseTo(want, 5);
      }
    }
  });

  it("gradient (logits and p, through the exit pdf to the gate logits)", () => {
    gradcheck(() => mixtureLogits(logits, exitPdf(a)), [...logits, a]);
    const p = tensor(exitPdf(a).data, [R, 2, 3], true);
    gradcheck(() => mixtureLogits(logits, p), [p]);
  });

  it("rejects a pdf of the wrong shape", () => {
    expect(() => mixtureLogits(logits, randn([2, 2, 3], 1))).toThrow(
      /pdf has shape \[2,2,3\], expected \[3,2,3\]/,
    );
  });
});

describe("mixtureLogProbs", () => {
  it("is ln Σ_r p(r)·softmax(logits(r))", () => {
    const p = exitPdf(a);
    const y = mixtureLogProbs(logits, p);
    for (let m = 0; m < 6; m++) {
      const mix = new Array<number>(V).fill(0);
      for (let r = 0; r < R; r++) {
        const s = plainSoftmax(logits[r]!.data, m * V, V);
        for (let v = 0; v < V; v++) mix[v]! += p.data[r * 6 + m]! * s[v]!;
      }
      for (let v = 0; v < V; v++) expect(y.data[m * V + v]).toBeCloseTo(Math.log(mix[v]!), 5);
      let total = 0;
      for (let v = 0; v < V; v++) total += Math.exp(y.data[m * V + v]!);
      expect(total).toBeCloseTo(1, 5);
    }
  });

  it("handles p = 0 at some steps", () => {
    const p = tensor(
      [1, 0, 0].flatMap((v) => new Array(6).fill(v)),
      [R, 2, 3],
    );
    const y = mixtureLogProbs(logits, p);
    for (let v = 0; v < V; v++) {
      const s = plainSoftmax(logits[0]!.data, 0, V);
      expect(y.data[v]).toBeCloseTo(Math.log(s[v]!), 5);
    }
  });

  it("gradient (logits and p)", () => {
    gradcheck(() => mixtureLogProbs(logits, exitPdf(a)), [...logits, a]);
    const p = tensor(exitPdf(a).data, [R, 2, 3], true);
    gradcheck(() => mixtureLogProbs(logits, p), [p]);
  });

  it("rejects a negative pdf entry", () => {
    const p = tensor(new Float32Array(R * 6).fill(-0.1), [R, 2, 3]);
    expect(() => mixtureLogProbs(logits, p)).toThrow(/pdf\[0\] is -0.1\d*, expected ≥ 0/);
  });
});
