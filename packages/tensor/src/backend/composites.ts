/*
 * The general composites, written once over any backend's kernels (model-ops.ts):
 *   crossEntropyOn = maskedMean(ceRows(logits, targets), targets)   (mean over the targets ≠ −100)
 *   linearSplitOn  = split(linear(x, w), widths, −1)                 (a backend's fused one if any)
 */
import type { TensorOps } from "./model-ops.js";

/** Mean cross-entropy of logits [..., V] over the targets ≠ IGNORE_INDEX: [1]. */
export function crossEntropyOn<T, I>(
  ops: Pick<TensorOps<T, I>, "ceRows" | "maskedMean">,
  logits: T,
  targets: I,
): T {
  return ops.maskedMean(ops.ceRows(logits, targets), targets);
}

/** linear(x, w) cut along the last axis into pieces of `widths` (fused where the backend has it). */
export function linearSplitOn<T, I>(
  ops: Pick<TensorOps<T, I>, "linear" | "split" | "linearSplit">,
  x: T,
  w: T,
  widths: readonly number[],
): T[] {
  if (ops.linearSplit) return ops.linearSplit(x, w, widths);
  return ops.split(ops.linear(x, w), widths, -1);
}
