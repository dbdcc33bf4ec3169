/*
 * Accumulates threshold-exit statistics over batches (docs/exit-gate.md "Inference: threshold exit"):
 * for each q, the histogram of exit steps z ∈ 1..R over the scored positions (target ≠ −100),
 * from which the mean selected step Σ r·count(r) / Σ count(r) follows.
 */
import { exitHistogram, thresholdExit } from "@loop/exit-gate";
import { type IntTensor, intTensor, type Tensor } from "@loop/tensor";

export interface ExitTally {
  q: number;
  /** counts[r − 1]: scored positions exiting at step r. */
  histogram: number[];
}

export function newTallies(qs: readonly number[], R: number): ExitTally[] {
  return [...qs].sort((a, b) => a - b).map((q) => ({ q, histogram: new Array<number>(R).fill(0) }));
}

/** Exit steps for threshold q over a batch, added to the tally's histogram. */
export function tallyExits(
  tally: ExitTally,
  pdf: Tensor,
  targets: Int32Array,
  shape: readonly number[],
): IntTensor {
  const z = thresholdExit(pdf, tally.q);
  const h = exitHistogram(z, tally.histogram.length, intTensor(targets, [...shape]));
  h.forEach((c, r) => {
    tally.histogram[r]! += c;
  });
  return z;
}

/** Mean exit step of a histogram (NaN when empty). */
export function meanStepOf(histogram: readonly number[]): number {
  let n = 0;
  let s = 0;
  histogram.forEach((c, r) => {
    n += c;
    s += c * (r + 1);
  });
  return n === 0 ? Number.NaN : s / n;
}

/** A tally as results report it: its q, mean exit step and histogram (in that key order). */
export interface ExitSummary extends ExitTally {
  /** Mean selected exit step over the scored positions. */
  meanStep: number;
}

export function exitSummary(t: ExitTally): ExitSummary {
  return { q: t.q, meanStep: meanStepOf(t.histogram), histogram: t.histogram };
}
