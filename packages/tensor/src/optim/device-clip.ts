/*
 * Global-norm gradient clipping written once over a backend's `TrainOps`: n = sqrt(Σ_p Σ_i g²)
 * over the trainable parameters holding a gradient; when n is finite and > maxNorm every such
 * gradient is scaled by maxNorm / (n + 1e-6). n stays on the backend as a one-element tensor
 * (NaN or Infinity when a gradient is not finite, and nothing is scaled then), so a device can
 * read it back together with the losses.
 */
import type { AutogradOps } from "../backend/autograd-ops.js";
import type { TrainOps, TrainParameter } from "../backend/train-ops.js";

/** The gradient norm (before clipping) of `params`; `maxNorm` 0 leaves the gradients. */
export function clipGradients<T>(
  ops: TrainOps<T, unknown> & AutogradOps<T>,
  params: readonly TrainParameter<T>[],
  maxNorm: number,
): T {
  if (!(maxNorm >= 0 && Number.isFinite(maxNorm)))
    throw new Error(`clipGradients: maxNorm must be ≥ 0 (0: no clipping), got ${maxNorm}`);
  const grads = params.filter((p) => ops.hasGrad(p.tensor)).map((p) => p.tensor);
  const norm = ops.gradNorm(grads);
  if (maxNorm > 0) ops.clipGrads(grads, norm, maxNorm);
  return norm;
}
