import { type IntTensor, intTensor, tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { exitHistogram, meanExitStep, qSweep } from "./exit-stats.js";

const steps = intTensor([1, 3, 2, 3, 1, 1], [2, 3]);
const targets = intTensor([5, -100, 2, -100, 0, 1], [2, 3]);

describe("meanExitStep", () => {
  it("over all positions and over non-ignored targets", () => {
    expect(meanExitStep(steps)).toBeCloseTo(11 / 6, 12);
    expect(meanExitStep(steps, targets)).toBeCloseTo(5 / 4, 12);
    expect(meanExitStep(steps, intTensor(new Array(6).fill(-100), [2, 3]))).toBeNaN();
  });

  it("rejects a mask of the wrong shape", () => {
    expect(() => meanExitStep(steps, intTensor([1, 2], [2]))).toThrow(
      /targets has shape \[2\], expected \[2,3\]/,
    );
  });
});

describe("exitHistogram", () => {
  it("counts per step", () => {
    expect(exitHistogram(steps, 4)).toEqual([3, 1, 2, 0]);
    expect(exitHistogram(steps, 3, targets)).toEqual([3, 1, 0]);
  });

  it("rejects a step beyond nSteps", () => {
    expect(() => exitHistogram(steps, 2)).toThrow(/steps\[1\] is 3, expected a step in \[1, 2\]/);
    expect(() => exitHistogram(steps, 0)).toThrow(/nSteps must be a positive integer, got 0/);
  });
});

describe("qSweep", () => {
  // Two steps, two tokens: p(1) = (0.3, 0.8).
  const pdf = tensor([0.3, 0.8, 0.7, 0.2], [2, 2]);

  it("gives (q, mean depth, metric, histogram) sorted by q", () => {
    const seen: number[] = [];
    const metric = (z: IntTensor, q: number) => {
      seen.push(q);
      return z.data[0]! * 10 + z.data[1]!;
    };
    const pts = qSweep(pdf, [0.9, 0, 0.5], metric);
    expect(pts.map((p) => p.q)).toEqual([0, 0.5, 0.9]);
    expect(pts.map((p) => p.meanStep)).toEqual([1, 1.5, 2]);
    expect(pts.map((p) => p.metric)).toEqual([11, 21, 22]);
    expect(pts.map((p) => p.histogram)).toEqual([
      [2, 0],
      [1, 1],
      [0, 2],
    ]);
    expect(seen).toEqual([0, 0.5, 0.9]);
  });

  it("restricts depth statistics to non-ignored targets", () => {
    const pts = qSweep(pdf, [0.5], () => 0, intTensor([-100, 3], [2]));
    expect(pts[0]!.meanStep).toBe(1);
    expect(pts[0]!.histogram).toEqual([1, 0]);
  });
});
