/*
 * The gate-training objectives on GPU tensors, as @loop/exit-gate's stage1.ts and stage2.ts
 * (same names, arguments, defaults and shapes; targets an i32 tensor): each loss is a [1] tensor
 * that stays on the device (N, the number of non-ignored targets, is counted there too).
 *   stage1Objective(a, ℓ, targets, β) = (1/N) Σ_m [Σ_r p(r)·ℓ(r) − β·H(p)]   (into a and ℓ)
 *   stage2Objective(a, ℓ, targets, k, γ) = (1/(N·R)) Σ_m Σ_{r≥2} BCE(λ(r), w(r))  (into a only)
 * Formulas and gradients: kernels/stage-losses.ts.
 */
import {
  DEFAULT_BETA,
  DEFAULT_GAMMA,
  DEFAULT_K,
  type GateLike,
  type Stage1Options,
  type Stage2Options,
} from "@loop/tensor";
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, GpuTensor } from "../gpu-tensor.js";
import { groups, type Kernel } from "../kernel-def.js";
import { PDF_GROUP } from "../kernels/exit-pdf.js";
import { maskedMeanKernel, NAN_BITS } from "../kernels/masked-mean.js";
import {
  stage1BackwardKernel,
  stage1TermsKernel,
  stage2BackwardKernel,
  stage2TermsKernel,
} from "../kernels/stage-losses.js";
import { recordGpu } from "../tape.js";
import { checkFinite, checkShape, checkStepMajor, checkTargets } from "./gate-shapes.js";
import { perStepCrossEntropy, perStepCrossEntropyDetached } from "./per-step-ce.js";

function checkObjective(a: GpuTensor, ce: GpuTensor, targets: GpuTensor, op: string) {
  const { R, M, tokenShape } = checkStepMajor(a, "gateLogits", op);
  checkShape(ce, a.shape, "ce", op);
  checkTargets(targets, tokenShape, op);
  return { R, M };
}

/** The masked mean of a terms kernel's [term | flag]: the loss [1] and N [1]. */
function maskedMean(
  ctx: GpuContext,
  terms: Kernel,
  buffers: Record<string, GPUBuffer>,
  params: Record<string, number>,
  M: number,
  scale: number,
): { loss: GpuTensor; count: GpuTensor } {
  const tf = emptyLike(ctx, [2, M]);
  ctx.run(terms, { ...buffers, tf }, params, [groups(M, PDF_GROUP)]);
  const loss = emptyLike(ctx, [1]);
  const count = emptyLike(ctx, [1]);
  ctx.run(maskedMeanKernel, { tf, out: loss, count }, { n: M, scale, nanBits: NAN_BITS }, [1]);
  return { loss, count };
}

/**
 * The stage-1 exit-gate objective on the GPU (as `stage1Objective` of @loop/exit-gate);
 * differentiable.
 */
export function stage1Objective(
  gateLogits: GpuTensor,
  ce: GpuTensor,
  targets: GpuTensor,
  beta: number = DEFAULT_BETA,
): GpuTensor {
  const op = "webgpu stage1Objective";
  const { R, M } = checkObjective(gateLogits, ce, targets, op);
  checkFinite(beta, "beta", op);
  const ctx = gateLogits.ctx;
  const io = { a: gateLogits.buffer, ce: ce.buffer, targets: targets.buffer };
  const params = { R, M, beta };
  const { loss, count } = maskedMean(ctx, stage1TermsKernel, io, params, M, 1);
  recordGpu("stage1Objective", [gateLogits, ce], [loss], ([g]) => {
    const ga = emptyLike(ctx, gateLogits.shape);
    const gce = emptyLike(ctx, ce.shape);
    ctx.run(stage1BackwardKernel, { ...io, g: g!, count, ga, gce }, params, [groups(M, PDF_GROUP)]);
    return [gateLogits.requiresGrad ? ga : null, ce.requiresGrad ? gce : null];
  });
  return loss;
}

/**
 * The stage-2 exit-gate objective on the GPU (as `stage2Objective` of @loop/exit-gate);
 * differentiable.
 */
export function stage2Objective(
  gateLogits: GpuTensor,
  ce: GpuTensor,
  targets: GpuTensor,
  k: number = DEFAULT_K,
  gamma: number = DEFAULT_GAMMA,
): GpuTensor {
  const op = "webgpu stage2Objective";
  const { R, M } = checkObjective(gateLogits, ce, targets, op);
  checkFinite(k, "k", op);
  checkFinite(gamma, "gamma", op);
  const ctx = gateLogits.ctx;
  const io = { a: gateLogits.buffer, ce: ce.buffer, targets: targets.buffer };
  const params = { R, M, k, gamma };
  const { loss, count } = maskedMean(ctx, stage2TermsKernel, io, params, M, R);
  recordGpu("stage2Objective", [gateLogits], [loss], ([g]) => {
    const ga = emptyLike(ctx, gateLogits.shape);
    ctx.run(stage2BackwardKernel, { ...io, g: g!, count, ga }, params, [groups(M, PDF_GROUP)]);
    return [ga];
  });
  return loss;
}

/** L1 from gate logits a [R, ...S] and per-step logits R × [...S, V] (differentiable in both). */
export function stage1Loss(
  gateLogits: GpuTensor,
  logitsPerStep: readonly GpuTensor[],
  targets: GpuTensor,
  opts: Stage1Options = {},
): GpuTensor {
  if (logitsPerStep.length !== gateLogits.shape[0])
    throw new Error(
      `webgpu stage1Loss: logitsPerStep has ${logitsPerStep.length} steps, expected R = ${gateLogits.shape[0]} from gateLogits`,
    );
  const ce = perStepCrossEntropy(logitsPerStep, targets);
  return stage1Objective(gateLogits, ce, targets, opts.beta ?? DEFAULT_BETA);
}

/** A view of `x` with no gradient path back (as @loop/exit-gate's detach). */
export function detach(x: GpuTensor): GpuTensor {
  const t = new GpuTensor(x.ctx, x.shape, { viewOf: x });
  t.name = x.name;
  return t;
}

/**
 * L2 for a gate on a looped model's per-step outputs: the readouts reach the gate detached and
 * the per-step losses are constants, so only the gate's parameters get a gradient.
 */
export function stage2Loss(
  gate: GateLike<GpuTensor>,
  readouts: readonly GpuTensor[],
  logitsPerStep: readonly GpuTensor[],
  targets: GpuTensor,
  opts: Stage2Options = {},
): GpuTensor {
  if (logitsPerStep.length !== readouts.length)
    throw new Error(
      `webgpu stage2Loss: logitsPerStep has ${logitsPerStep.length} steps, expected ${readouts.length} like readouts`,
    );
  const ce = perStepCrossEntropyDetached(logitsPerStep, targets);
  const a = gate.logits(readouts.map(detach));
  return stage2Objective(a, ce, targets, opts.k ?? DEFAULT_K, opts.gamma ?? DEFAULT_GAMMA);
}
