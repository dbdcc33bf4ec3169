/*
 * Statistics of per-token exit steps z (1-based, [...S]) — the predicted depth reported beside
 * accuracy (docs/exit-gate.md "Inference"): the mean selected step, the histogram over steps, and a
 * q-sweep giving (mean depth, metric) for each threshold. Statistics can be restricted to the
 * positions whose target is not −100 by passing `targets`.
 */
import { IGNORE_INDEX, type IntTensor } from "@loop/tensor";
import { checkShape, checkStepMajor } from "./shapes.js";
import { type PdfLike, thresholdExit } from "./threshold-exit.js";

function included(
  steps: IntTensor,
  targets: IntTensor | undefined,
  op: string,
): (m: number) => boolean {
  if (targets === undefined) return () => true;
  checkShape(targets, steps.shape, "targets", op);
  return (m) => targets.data[m] !== IGNORE_INDEX;
}

/** Mean of z over all positions (or over non-ignored targets); NaN when none is included. */
export function meanExitStep(steps: IntTensor, targets?: IntTensor): number {
  const keep = included(steps, targets, "meanExitStep");
  let total = 0;
  let n = 0;
  for (let m = 0; m < steps.size; m++) {
    if (!keep(m)) continue;
    total += steps.data[m]!;
    n++;
  }
  return n === 0 ? Number.NaN : total / n;
}

/** counts[r − 1] = number of included positions exiting at step r, r = 1..nSteps. */
export function exitHistogram(steps: IntTensor, nSteps: number, targets?: IntTensor): number[] {
  if (!Number.isInteger(nSteps) || nSteps < 1) {
    throw new Error(`exitHistogram: nSteps must be a positive integer, got ${nSteps}`);
  }
  const keep = included(steps, targets, "exitHistogram");
  const counts = new Array<number>(nSteps).fill(0);
  for (let m = 0; m < steps.size; m++) {
    if (!keep(m)) continue;
    const z = steps.data[m]!;
    if (z < 1 || z > nSteps) {
      throw new Error(`exitHistogram: steps[${m}] is ${z}, expected a step in [1, ${nSteps}]`);
    }
    counts[z - 1]!++;
  }
  return counts;
}

/**
 * One threshold of an exit sweep: q, the mean exit step, the caller's metric and the exit-step
 * histogram.
 */
export interface SweepPoint {
  q: number;
  /** Mean selected exit step (over non-ignored targets when `targets` is given). */
  meanStep: number;
  /** The caller's metric for the exits chosen at this q. */
  metric: number;
  /** Histogram over steps 1..R, same positions as meanStep. */
  histogram: number[];
}

/**
 * For each threshold q: threshold exits z, their mean depth and histogram, and `metric(z, q)`
 * (e.g. accuracy of the selected logits). Points come back sorted by q, which also sorts them by
 * mean depth (z is non-decreasing in q): the depth/metric frontier.
 */
export function qSweep(
  pdf: PdfLike,
  qs: readonly number[],
  metric: (steps: IntTensor, q: number) => number,
  targets?: IntTensor,
): SweepPoint[] {
  const { R } = checkStepMajor(pdf, "pdf", "qSweep");
  return [...qs]
    .sort((x, y) => x - y)
    .map((q) => {
      const steps = thresholdExit(pdf, q);
      return {
        q,
        meanStep: meanExitStep(steps, targets),
        metric: metric(steps, q),
        histogram: exitHistogram(steps, R, targets),
      };
    });
}
