/*
 * Stage-1 entropy-regularised objective (docs/exit-gate.md "Training", stage 2 of 3):
 *   L1 = (1/N) Σ_{m: target_m ≠ −100} [ Σ_r p(r)_m·ℓ(r)_m − β·H(p_m) ],
 *   H(p_m) = −Σ_r p(r)_m ln p(r)_m (natural log),  N = number of non-ignored targets.
 * With u = ln p (log-pdf.ts) the per-token term is f = Σ_r p(r)·(ℓ(r) + β·u(r)), so
 *   ∂f/∂ℓ(r) = p(r),   ∂f/∂u(r) = p(r)·(ℓ(r) + β·(u(r) + 1))   → ∂a via logPdfBackward.
 * Shapes: gate logits a [R, ...S], per-step CE ℓ [R, ...S], targets int [...S] → L1 [1].
 * NaN (zero gradients) when every target is ignored, like `crossEntropy`.
 */
import {
  countTargets,
  DEFAULT_BETA,
  IGNORE_INDEX,
  type IntTensor,
  type Stage1Options,
  type Tensor,
} from "@loop/tensor";
import { record1 } from "@loop/tensor/kernel";
import { logPdfBackward, logPdfForward } from "./log-pdf.js";
import { perStepCrossEntropy } from "./per-step-ce.js";
import { checkFinite, checkObjectiveInputs } from "./shapes.js";

export { DEFAULT_BETA, type Stage1Options };

/**
 * The stage-1 objective (docs/exit-gate.md): expected cross-entropy under the exit distribution
 * minus β times its entropy, averaged over non-ignored targets.
 */
export function stage1Objective(
  gateLogits: Tensor,
  ce: Tensor,
  targets: IntTensor,
  beta: number = DEFAULT_BETA,
): Tensor {
  const op = "stage1Objective";
  const { R, M } = checkObjectiveInputs(gateLogits, ce, targets, op);
  checkFinite(beta, "beta", op);
  const n = R * M;
  const u = new Float64Array(n);
  const lam = new Float64Array(n);
  logPdfForward(gateLogits.data, R, M, u, lam);
  const N = countTargets(targets);
  const l = ce.data;
  let total = 0;
  for (let m = 0; m < M; m++) {
    if (targets.data[m] === IGNORE_INDEX) continue;
    for (let r = 0; r < R; r++) {
      const i = r * M + m;
      total += Math.exp(u[i]!) * (l[i]! + beta * u[i]!);
    }
  }
  const value = N === 0 ? Number.NaN : total / N;
  return record1(op, [gateLogits, ce], Float32Array.of(value), [1], ([g], needs) => {
    const ga = needs[0] ? new Float32Array(n) : null;
    const gce = needs[1] ? new Float32Array(n) : null;
    if (N === 0) return [ga, gce];
    const s = g![0]! / N;
    const c = new Float64Array(n);
    for (let m = 0; m < M; m++) {
      if (targets.data[m] === IGNORE_INDEX) continue;
      for (let r = 0; r < R; r++) {
        const i = r * M + m;
        const p = Math.exp(u[i]!);
        if (gce) gce[i] = s * p;
        c[i] = s * p * (l[i]! + beta * (u[i]! + 1));
      }
    }
    if (ga) logPdfBackward(c, lam, R, M, ga);
    return [ga, gce];
  });
}

/**
 * L1 from gate logits a [R, ...S] and per-step logits R × [...S, V]; differentiable in both
 * (backbone, head and gate train jointly).
 */
export function stage1Loss(
  gateLogits: Tensor,
  logitsPerStep: readonly Tensor[],
  targets: IntTensor,
  opts: Stage1Options = {},
): Tensor {
  if (logitsPerStep.length !== gateLogits.shape[0]) {
    throw new Error(
      `stage1Loss: logitsPerStep has ${logitsPerStep.length} steps, expected R = ${gateLogits.shape[0]} from gateLogits`,
    );
  }
  const ce = perStepCrossEntropy(logitsPerStep, targets);
  return stage1Objective(gateLogits, ce, targets, opts.beta ?? DEFAULT_BETA);
}
