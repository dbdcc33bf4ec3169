import { gradcheck, siluSplit } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { causalConv1d } from "./causal-conv1d.js";
import { causalConv1dSiluSplit } from "./conv-silu-split.js";

// The portable path (no native kernel registered); native/ssm.c's fused kernels are compared
// with it in src/node/native-ssm.test.ts.
describe("causalConv1dSiluSplit", () => {
  it("equals silu(conv1d) split along channels", () => {
    const x = randn([2, 6, 7], 1);
    const w = randn([7, 1, 3], 2);
    const b = randn([7], 3);
    const init = randn([2, 7, 2], 4);
    const got = causalConv1dSiluSplit(x, w, b, init, [4, 1, 2]);
    const want = siluSplit(causalConv1d(x, w, b, init), [4, 1, 2]);
    expect(got.map((t) => t.shape)).toEqual([
      [2, 6, 4],
      [2, 6, 1],
      [2, 6, 2],
    ]);
    for (const [i, t] of got.entries()) expect(t.data).toEqual(want[i]!.data);
  });

  it("gradcheck: x, weight, bias, initial state", () => {
    const x = randn([2, 5, 6], 11);
    const w = randn([6, 1, 3], 12);
    const b = randn([6], 13);
    const init = randn([2, 6, 2], 14);
    gradcheck(() => causalConv1dSiluSplit(x, w, b, init, [3, 2, 1]), [x, w, b, init]);
  });

  it("rejects widths that do not cover the channels", () => {
    const x = randn([1, 4, 5], 1);
    const w = randn([5, 1, 4], 2);
    expect(() => causalConv1dSiluSplit(x, w, null, null, [2, 2])).toThrow(
      "causalConv1dSiluSplit: widths [2,2] do not sum to the channels 5 of [1,4,5]",
    );
    expect(() => causalConv1dSiluSplit(x, w, null, null, [6, -1])).toThrow(/widths \[6,-1\]/);
  });
});
