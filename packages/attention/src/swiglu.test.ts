import { gradcheck, mul, noGrad, silu } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { swiglu } from "./swiglu.js";

describe("swiglu", () => {
  it("equals silu(gate) ⊙ up from the unfused ops", () => {
    const g = randn([3, 4, 5], 1, { std: 3 });
    const u = randn([3, 4, 5], 2);
    const fused = noGrad(() => swiglu(g, u)).data;
    const plain = noGrad(() => mul(silu(g), u)).data;
    for (let i = 0; i < fused.length; i++) {
      expect(Math.abs(fused[i]! - plain[i]!)).toBeLessThanOrEqual(1e-6 * (1 + Math.abs(plain[i]!)));
    }
  });
  it("gradient (finite differences)", () => {
    const g = randn([4, 6], 3, { std: 2 });
    const u = randn([4, 6], 4);
    gradcheck(() => swiglu(g, u), [g, u]);
  });
  it("gradient for one input only", () => {
    const g = randn([2, 3], 5, { requiresGrad: false });
    const u = randn([2, 3], 6);
    gradcheck(() => swiglu(g, u), [u]);
  });
  it("rejects mismatched shapes", () => {
    expect(() => swiglu(randn([2, 3], 1), randn([2, 4], 2))).toThrow(/\[2,3\].*\[2,4\]/);
  });
});
