import { describe, expect, it } from "vitest";
import { mul, scale } from "../ops/binary.js";
import { parameter, tensor } from "../tensor.js";
import { backward } from "./backward.js";
import { releaseGrads } from "./leaf-grad.js";

describe("leaf gradients", () => {
  it("releaseGrads clears .grad and the next backward reuses the buffer", () => {
    const w = parameter(Float32Array.of(1, 2, 3), [3], "w");
    const x = tensor([4, 5, 6]);
    backward(mul(w, x), [Float32Array.of(1, 1, 1)]);
    const first = w.grad!;
    expect(Array.from(first)).toEqual([4, 5, 6]);
    releaseGrads([{ tensor: w }]);
    expect(w.grad).toBeNull();
    backward(scale(w, 2), [Float32Array.of(1, 1, 1)]);
    expect(w.grad).toBe(first);
    expect(Array.from(w.grad!)).toEqual([2, 2, 2]);
    // a second backward without release accumulates
    backward(scale(w, 3), [Float32Array.of(1, 1, 1)]);
    expect(Array.from(w.grad!)).toEqual([5, 5, 5]);
  });
  it("without releaseGrads a cleared gradient gets a fresh buffer", () => {
    const w = parameter(Float32Array.of(1, 2), [2], "w");
    backward(scale(w, 2), [Float32Array.of(1, 1)]);
    const first = w.grad!;
    w.zeroGrad();
    backward(scale(w, 3), [Float32Array.of(1, 1)]);
    expect(w.grad).not.toBe(first);
    expect(Array.from(first)).toEqual([2, 2]);
    expect(Array.from(w.grad!)).toEqual([3, 3]);
  });
});
