import { describe, expect, it } from "vitest";
import { fastExp } from "./fast-exp.js";

describe("fastExp", () => {
  it("matches Math.exp to 1e-8 relative over the softmax range", () => {
    let worst = 0;
    for (let i = 0; i <= 200_000; i++) {
      const x = -700 + (i / 200_000) * 780; // −700 … 80
      const want = Math.exp(x);
      worst = Math.max(worst, Math.abs(fastExp(x) - want) / want);
    }
    expect(worst).toBeLessThan(1e-8);
    expect(fastExp(0)).toBe(1);
  });
  it("is 0 far below the float32 range and exact at small integers of ln 2", () => {
    expect(fastExp(-800)).toBe(0);
    expect(fastExp(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(fastExp(-3 * Math.LN2)).toBeCloseTo(0.125, 15);
  });
});
