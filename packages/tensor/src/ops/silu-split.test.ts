import { describe, expect, it } from "vitest";
import { backward } from "../autograd/backward.js";
import { gradcheck } from "../gradcheck.js";
import { randn } from "../random-tensor.js";
import type { Tensor } from "../tensor.js";
import { add, mul } from "./binary.js";
import { sum } from "./reduce.js";
import { split } from "./shape.js";
import { siluSplit } from "./silu-split.js";
import { silu } from "./unary.js";

describe("siluSplit", () => {
  it("equals split(silu(x)) forward, empty pieces included", () => {
    const x = randn([2, 3, 9], 1);
    const a = siluSplit(x, [4, 0, 5]);
    const b = split(silu(x), [4, 0, 5]);
    expect(a.map((t) => t.shape)).toEqual(b.map((t) => t.shape));
    a.forEach((t, k) => {
      for (let i = 0; i < t.size; i++) expect(t.data[i]).toBeCloseTo(b[k]!.data[i]!, 6);
    });
  });

  it("gradient (finite differences), and zeros where a piece has none", () => {
    const x = randn([3, 7], 2);
    gradcheck(() => siluSplit(x, [2, 3, 2]), [x]);
    x.grad = null;
    const grads = (pieces: Tensor[]) => {
      backward(add(sum(mul(pieces[0]!, pieces[0]!)), sum(pieces[2]!)));
      const g = Array.from(x.grad!);
      x.grad = null;
      return g;
    };
    const a = grads(siluSplit(x, [2, 3, 2]));
    const b = grads(split(silu(x), [2, 3, 2]));
    for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i]!, 6);
    expect(a.slice(2, 5)).toEqual([0, 0, 0]);
  });

  it("names widths that do not cover the axis", () => {
    expect(() => siluSplit(randn([2, 4], 3), [1, 2])).toThrow(
      "siluSplit: widths [1,2] do not sum to last axis 4 of [2,4]",
    );
  });
});
