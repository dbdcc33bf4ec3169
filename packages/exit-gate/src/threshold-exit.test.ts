import { tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { exitCdf, fixedExitSteps, thresholdExit } from "./threshold-exit.js";

// Three steps, two tokens: token 0 has p = (0.5, 0.1, 0.4), token 1 has p = (0, 0.25, 0.75).
const pdf = tensor([0.5, 0, 0.1, 0.25, 0.4, 0.75], [3, 2]);

describe("exitCdf", () => {
  it("hand-computed cumulative sums (float64)", () => {
    const c = exitCdf(pdf);
    const f = (x: number) => Math.fround(x);
    expect(Array.from(c)).toEqual([
      f(0.5),
      0,
      f(0.5) + f(0.1),
      f(0.25),
      f(0.5) + f(0.1) + f(0.4),
      f(0.25) + f(0.75),
    ]);
  });
});

describe("thresholdExit", () => {
  it("z = min{n : CDF(n) ≥ q} for q between 0 and 1", () => {
    expect(Array.from(thresholdExit(pdf, 0.5).data)).toEqual([1, 3]);
    expect(Array.from(thresholdExit(pdf, 0.55).data)).toEqual([2, 3]);
    expect(Array.from(thresholdExit(pdf, 0.25).data)).toEqual([1, 2]);
    expect(Array.from(thresholdExit(pdf, 0.61).data)).toEqual([3, 3]);
    expect(thresholdExit(pdf, 0.5).shape).toEqual([2]);
  });

  it("q = 0 exits at step 1 (even where p(1) = 0)", () => {
    expect(Array.from(thresholdExit(pdf, 0).data)).toEqual([1, 1]);
  });

  it("q = 1 exits at the last step, also when Σp rounds below 1", () => {
    expect(Array.from(thresholdExit(pdf, 1).data)).toEqual([3, 3]);
    // float32 values whose float64 sum is just below 1.
    const short = tensor([0.1, 0.2, 0.7], [3, 1]);
    expect(exitCdf(short)[2]).toBeLessThan(1);
    expect(Array.from(thresholdExit(short, 1).data)).toEqual([3]);
  });

  it("exits are monotone in q", () => {
    let prev = 0;
    for (const q of [0, 0.1, 0.3, 0.5, 0.59, 0.6, 0.9, 1]) {
      const z = thresholdExit(pdf, q).data[0]!;
      expect(z).toBeGreaterThanOrEqual(prev);
      prev = z;
    }
  });

  it("keeps the token shape", () => {
    const p = tensor(new Float32Array(2 * 2 * 3).fill(0.5), [2, 2, 3]);
    expect(thresholdExit(p, 0.7).shape).toEqual([2, 3]);
  });

  it("rejects q outside [0, 1]", () => {
    expect(() => thresholdExit(pdf, 1.5)).toThrow(/q must be in \[0, 1\], got 1.5/);
    expect(() => thresholdExit(pdf, Number.NaN)).toThrow(/q must be in \[0, 1\], got NaN/);
  });
});

describe("fixedExitSteps", () => {
  it("fills the step", () => {
    const z = fixedExitSteps([2, 3], 2, 4);
    expect(z.shape).toEqual([2, 3]);
    expect(Array.from(z.data)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(() => fixedExitSteps([2], 5, 4)).toThrow(/step must be an integer in \[1, 4\], got 5/);
  });
});
