/*
 * The rules of one optimizer step that every backend's step follows (`encodeStep`, run by the
 * device step engine and by the CPU Trainer): how micro-batches are weighted and averaged, and
 * when a step may update the weights.
 */

/** The seed of each micro-batch's backward: the step's gradient is the micro-batches' mean. */
export function microBatchWeight(microBatches: number): number {
  return 1 / microBatches;
}

/** The step's loss: the micro-batch losses summed in order, divided by their count. */
export function meanLoss(losses: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < losses.length; i++) s += losses[i]!;
  return s / losses.length;
}

/**
 * What is not finite in a step ("loss (NaN)", "gradient norm (Infinity)"), or null. A step
 * updates the weights and moments only when this is null; otherwise training stops before any
 * weight changes (NonFiniteError), so the last good state and checkpoint stay intact.
 */
export function nonFiniteWhat(loss: number, gradNorm = 0): string | null {
  if (!Number.isFinite(loss)) return `loss (${loss})`;
  if (!Number.isFinite(gradNorm)) return `gradient norm (${gradNorm})`;
  return null;
}
