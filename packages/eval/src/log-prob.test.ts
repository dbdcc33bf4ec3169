import { crossEntropy, intTensor, tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { isArgmax, logProbAt } from "./log-prob.js";

describe("logProbAt", () => {
  it("is the negative of crossEntropy, row by row", () => {
    const V = 7;
    const logits = randn([5, V], 3, { std: 3 });
    const targets = [0, 6, 3, 2, 5];
    for (let r = 0; r < 5; r++) {
      const ce = crossEntropy(randnRow(logits.data, r, V), intTensor([targets[r]!], [1])).item();
      expect(logProbAt(logits.data, r, V, targets[r]!)).toBeCloseTo(-ce, 5);
    }
  });

  it("stays finite for huge logits", () => {
    const row = Float32Array.of(1e30, -1e30, 0);
    expect(logProbAt(row, 0, 3, 0)).toBe(0);
    expect(logProbAt(row, 0, 3, 2)).toBe(-Math.fround(1e30));
  });

  it("rejects bad targets and rows", () => {
    expect(() => logProbAt(new Float32Array(6), 0, 3, 3)).toThrow(
      /target must be a token id in \[0, 3\), got 3/,
    );
    expect(() => logProbAt(new Float32Array(6), 2, 3, 0)).toThrow(/row 2 is outside/);
  });

  it("isArgmax takes the first maximum", () => {
    const row = Float32Array.of(1, 5, 5);
    expect(isArgmax(row, 0, 3, 1)).toBe(true);
    expect(isArgmax(row, 0, 3, 2)).toBe(false);
  });
});

function randnRow(data: Float32Array, r: number, V: number) {
  return tensor(data.slice(r * V, r * V + V), [1, V]);
}
