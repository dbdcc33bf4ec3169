/*
 * Per-token cross-entropy of every loop step's logits, stacked step-major:
 *   ℓ[r, m] = −log_softmax(logits(r)[m])[target_m]   (0 where target_m = −100)
 * Shapes: logits R × [...S, V], targets int [...S] → ℓ [R, ...S]. Composed from the tensor
 * package's fused `crossEntropyPerToken` and `stack`, so gradients flow into every step's logits.
 */
import { crossEntropyPerToken, type IntTensor, noGrad, stack, type Tensor } from "@loop/tensor";
import { checkPerStep, checkShape } from "./shapes.js";

/**
 * Cross-entropy of every loop step's logits against `targets`, per token: [R, …] (ignored targets
 * give 0); differentiable.
 */
export function perStepCrossEntropy(logitsPerStep: readonly Tensor[], targets: IntTensor): Tensor {
  const s = checkPerStep(logitsPerStep, "logitsPerStep", "perStepCrossEntropy");
  checkShape(targets, s.slice(0, -1), "targets", "perStepCrossEntropy");
  return stack(logitsPerStep.map((l) => crossEntropyPerToken(l, targets)));
}

/** ℓ [R, ...S] as plain data with no graph (stage 2 treats the per-step losses as constants). */
export function perStepCrossEntropyDetached(
  logitsPerStep: readonly Tensor[],
  targets: IntTensor,
): Tensor {
  return noGrad(() => perStepCrossEntropy(logitsPerStep, targets));
}
