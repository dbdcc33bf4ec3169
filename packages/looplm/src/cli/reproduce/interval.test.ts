import studentTQuantile from "@stdlib/stats-base-dists-t-quantile";
import { describe, expect, it } from "vitest";
import { MIN_SEEDS, pairedDifferences, readInterval, tInterval } from "./interval.js";
import { formatMeanSd, meanSd } from "./stats.js";

describe("Student's t", () => {
  it("quantiles match the printed table (two-sided 95 %: t_{0.975, df})", () => {
    // e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2, three decimals
    const table: [number, number][] = [
      [1, 12.706],
      [2, 4.303],
      [3, 3.182],
      [4, 2.776],
      [5, 2.571],
      [9, 2.262],
      [10, 2.228],
      [20, 2.086],
      [30, 2.042],
      [100, 1.984],
    ];
    for (const [df, t] of table) expect(studentTQuantile(0.975, df), `df ${df}`).toBeCloseTo(t, 3);
    expect(studentTQuantile(0.95, 4)).toBeCloseTo(2.132, 3);
    expect(studentTQuantile(0.995, 9)).toBeCloseTo(3.25, 3);
    expect(studentTQuantile(0.025, 4)).toBeCloseTo(-2.776, 3);
    expect(studentTQuantile(0.5, 7)).toBe(0);
    // many degrees of freedom: the normal quantile 1.959964
    expect(studentTQuantile(0.975, 1e6)).toBeCloseTo(1.959964, 4);
  });
});

describe("meanSd", () => {
  it("is the mean and the sample standard deviation", () => {
    const m = meanSd([0.5, 0.7, 0.9]);
    expect(m.mean).toBeCloseTo(0.7, 12);
    expect(m.sd).toBeCloseTo(0.2, 12); // sqrt(((−0.2)² + 0² + 0.2²) / 2)
    expect(meanSd([3])).toEqual({ mean: 3, sd: 0, n: 1 });
    expect(formatMeanSd(m, "accuracy")).toBe("70.00 ± 20.00 %");
    expect(formatMeanSd(meanSd([10, 12]), "ppl")).toBe("11.00 ± 1.41");
  });
  it("rejects no values and non-finite values", () => {
    expect(() => meanSd([])).toThrow(/no values/);
    expect(() => meanSd([1, Number.NaN])).toThrow(/finite/);
  });
});

describe("tInterval", () => {
  it("is mean ± t·sd/√n (a reference computation by hand)", () => {
    // differences 1, 2, 3, 4, 5: mean 3, sd √2.5 = 1.5811, se 0.70711, t_{0.975,4} = 2.77645
    // → 3 ± 1.96324 (scipy.stats.t.interval(0.95, 4, loc=3, scale=0.70711): 1.03676, 4.96324)
    const ci = tInterval([1, 2, 3, 4, 5]);
    expect(ci.mean).toBe(3);
    expect(ci.lo).toBeCloseTo(1.03676, 4);
    expect(ci.hi).toBeCloseTo(4.96324, 4);
    // ten values: t_{0.975,9} = 2.26216
    const ten = [2.1, 1.9, 2.4, 2.0, 2.2, 1.8, 2.3, 2.5, 1.7, 2.1];
    const m = meanSd(ten);
    const half = (2.262157 * m.sd) / Math.sqrt(10);
    expect(tInterval(ten).lo).toBeCloseTo(m.mean - half, 5);
    expect(tInterval(ten).hi).toBeCloseTo(m.mean + half, 5);
    // a single value has no interval
    expect(tInterval([4]).lo).toBeNaN();
  });
  it("pairs differences seed by seed", () => {
    expect(pairedDifferences([5, 6, 7], [1, 1, 2])).toEqual([4, 5, 5]);
    expect(() => pairedDifferences([1, 2], [1])).toThrow(/2 vs 1/);
  });
});

describe("readInterval", () => {
  const ci = (lo: number, hi: number, n = MIN_SEEDS) => ({ mean: (lo + hi) / 2, sd: 1, n, lo, hi });
  it("holds above the margin, contradicted below, inconclusive across it", () => {
    expect(readInterval(ci(0.1, 0.4), 0)).toEqual({ kind: "holds" });
    expect(readInterval(ci(-0.4, -0.1), 0)).toEqual({ kind: "contradicted" });
    expect(readInterval(ci(-0.1, 0.4), 0)).toEqual({ kind: "inconclusive" });
    // a margin: "within 2 points" is −0.02
    expect(readInterval(ci(-0.015, 0.01), -0.02)).toEqual({ kind: "holds" });
    expect(readInterval(ci(-0.05, -0.03), -0.02)).toEqual({ kind: "contradicted" });
  });
  it("needs MIN_SEEDS seeds for any verdict", () => {
    expect(MIN_SEEDS).toBe(5);
    expect(readInterval(ci(0.1, 0.4, 3), 0)).toEqual({
      kind: "inconclusive",
      reason: "3 seeds < 5",
    });
  });
});
