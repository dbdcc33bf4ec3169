import { describe, expect, it } from "vitest";
import { backward } from "../autograd/backward.js";
import { gradcheck } from "../gradcheck.js";
import { randn } from "../random-tensor.js";
import type { Tensor } from "../tensor.js";
import { add, mul } from "./binary.js";
import { linearSplit } from "./linear-split.js";
import { linear } from "./matmul.js";
import { sum } from "./reduce.js";
import { split } from "./shape.js";

describe("linearSplit", () => {
  it("equals split(linear(x, W)), empty pieces included", () => {
    const x = randn([2, 5, 7], 1);
    const w = randn([11, 7], 2);
    const widths = [4, 0, 6, 1];
    const a = linearSplit(x, w, widths);
    const b = split(linear(x, w), widths);
    expect(a.map((y) => y.shape)).toEqual([
      [2, 5, 4],
      [2, 5, 0],
      [2, 5, 6],
      [2, 5, 1],
    ]);
    a.forEach((y, k) => {
      for (let i = 0; i < y.size; i++) expect(y.data[i]).toBeCloseTo(b[k]!.data[i]!, 5);
    });
  });

  it("gradient (finite differences), including pieces without a gradient", () => {
    const x = randn([3, 6], 3);
    const w = randn([9, 6], 4);
    gradcheck(() => linearSplit(x, w, [2, 3, 4]), [x, w]);
    gradcheck(() => linearSplit(x, w, [2, 3, 4])[1]!, [x, w]);
  });

  it("gives the gradients of split(linear(x, W)) when one piece has none", () => {
    const x = randn([4, 5], 5);
    const w = randn([7, 5], 6);
    const grads = (pieces: Tensor[]) => {
      backward(add(sum(mul(pieces[0]!, pieces[0]!)), sum(pieces[2]!)));
      const out = { gx: Array.from(x.grad!), gw: Array.from(w.grad!) };
      x.grad = null;
      w.grad = null;
      return out;
    };
    const a = grads(linearSplit(x, w, [3, 1, 3]));
    const b = grads(split(linear(x, w), [3, 1, 3]));
    for (const key of ["gx", "gw"] as const)
      for (let i = 0; i < a[key].length; i++) expect(a[key][i]).toBeCloseTo(b[key][i]!, 5);
    expect(a.gw.slice(15, 20)).toEqual([0, 0, 0, 0, 0]); // the middle row block: no gradient
  });

  it("names bad widths and shapes", () => {
    const x = randn([2, 3], 7);
    expect(() => linearSplit(x, randn([5, 3], 8), [2, 2])).toThrow(
      "linearSplit: widths [2,2] must be non-negative integers summing to the 5 output features",
    );
    expect(() => linearSplit(x, randn([5, 4], 8), [5])).toThrow(
      "linearSplit: input [2,3] has last axis 3, weight expects 4",
    );
  });
});
