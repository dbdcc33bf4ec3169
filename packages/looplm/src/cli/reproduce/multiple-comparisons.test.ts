import { describe, expect, it } from "vitest";
import { holmAdjust, tTestP } from "./multiple-comparisons.js";

describe("multiple comparisons", () => {
  it("t-test p values match R's t.test", () => {
    // t.test(c(1.80, 1.45, -0.01, 1.77, 1.56))$p.value
    expect(tTestP([1.8, 1.45, -0.01, 1.77, 1.56])).toBeCloseTo(0.017615, 5);
    // t.test(c(1, 2, 3))$p.value
    expect(tTestP([1, 2, 3])).toBeCloseTo(0.07418, 5);
    expect(tTestP([0, 0, 0])).toBe(1);
    expect(tTestP([2, 2])).toBe(0);
    expect(tTestP([1])).toBeNaN();
  });
  it("Holm multiplies the i-th smallest by m − i and keeps the order monotone", () => {
    // p.adjust(c(0.01, 0.04, 0.03, 0.2), "holm") = 0.04 0.09 0.09 0.20
    const a = holmAdjust([0.01, 0.04, 0.03, 0.2]);
    expect(a).toEqual([0.04, 0.09, 0.09, 0.2].map((v) => expect.closeTo(v, 12)));
    expect(holmAdjust([0.5, 0.6])).toEqual([1, 1]);
    const n = holmAdjust([0.01, Number.NaN, 0.02]);
    expect(n[0]).toBeCloseTo(0.02, 12);
    expect(n[1]).toBeNaN();
    expect(n[2]).toBeCloseTo(0.02, 12);
  });
});
