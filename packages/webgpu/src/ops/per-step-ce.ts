/*
 * Per-step cross-entropy on GPU tensors, as @loop/exit-gate's perStepCrossEntropy: logits
 * R × [...S, V], targets i32 [...S] → ℓ [R, ...S] (0 where the target is −100), one fused node
 * (kernels/per-step-ce.ts) so gradients flow into every step's logits.
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { CE_EW, ceBackwardKernel, ceRowKernel } from "../kernels/per-step-ce.js";
import { freshGrads, gpuNoGrad, recordGpu } from "../tape.js";
import { checkPerStep, checkTargets } from "./gate-shapes.js";

/** Cross-entropy of every loop step's logits per token, [R, …], on the GPU; differentiable. */
export function perStepCrossEntropy(
  logitsPerStep: readonly GpuTensor[],
  targets: GpuTensor,
): GpuTensor {
  const op = "webgpu perStepCrossEntropy";
  const s = checkPerStep(logitsPerStep, "logitsPerStep", op);
  checkTargets(targets, s.slice(0, -1), op);
  const ctx = targets.ctx;
  const R = logitsPerStep.length;
  const V = s[s.length - 1]!;
  const M = targets.size;
  const ce = emptyLike(ctx, [R, ...s.slice(0, -1)]);
  const lse = emptyLike(ctx, [R, M]);
  logitsPerStep.forEach((x, r) => {
    ctx.run(ceRowKernel, { x, targets, ce, lse }, { rows: M, V, off: r * M }, grid(M, 1));
  });
  recordGpu("perStepCrossEntropy", logitsPerStep, [ce], ([g]) =>
    freshGrads(logitsPerStep, (gx, x, r) =>
      ctx.run(
        ceBackwardKernel,
        { x, targets, lse, g: g!, gx },
        { n: M * V, V, off: r * M },
        grid(M * V, CE_EW),
      ),
    ),
  );
  return ce;
}

/** ℓ [R, ...S] with no graph (stage 2 treats the per-step losses as constants). */
export function perStepCrossEntropyDetached(
  logitsPerStep: readonly GpuTensor[],
  targets: GpuTensor,
): GpuTensor {
  return gpuNoGrad(() => perStepCrossEntropy(logitsPerStep, targets));
}
