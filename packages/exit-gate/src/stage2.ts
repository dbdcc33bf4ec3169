/*
 * Stage-2 focused gate objective (docs/exit-gate.md "Training", stage 3 of 3). With the per-step
 * losses ℓ treated as constants (detached) and λ = sigmoid(a):
 *   I(r)_m = max(0, ℓ(r−1)_m − ℓ(r)_m),   w(r)_m = sigmoid(k·(I(r)_m − γ))
 *   L(r)   = −(1/N) Σ_{m: target ≠ −100} [ w·ln(1 − λ(r)) + (1 − w)·ln λ(r) ]
 *   L2     = (1/R) Σ_{r=2..R} L(r)          (the paper's 1/R, not 1/(R−1); λ(R) included)
 * ln λ = logsigmoid(a), ln(1 − λ) = logsigmoid(−a), so ∂L2/∂a(r)_m = (λ(r)_m − 1 + w(r)_m)/(N·R)
 * for r ≥ 2 and 0 for r = 1. Only the gate logits get a gradient.
 * Shapes: gate logits a [R, ...S], ℓ [R, ...S] (read as constants), targets int [...S] → L2 [1].
 * NaN (zero gradient) when every target is ignored.
 */
import {
  countTargets,
  DEFAULT_GAMMA,
  DEFAULT_K,
  type GateLike as GenericGateLike,
  IGNORE_INDEX,
  type IntTensor,
  type Shape,
  type Stage2Options,
  type Tensor,
} from "@loop/tensor";
import { record1, sigmoidScalar, softplusScalar } from "@loop/tensor/kernel";
import { detach } from "./detach.js";
import { perStepCrossEntropyDetached } from "./per-step-ce.js";
import { checkFinite, checkObjectiveInputs } from "./shapes.js";

export { DEFAULT_GAMMA, DEFAULT_K, type Stage2Options };

/** Continuation labels w [R, M] (float64; row r = 0 unused) from per-step losses ℓ [R, M]. */
export function continuationLabels(
  ce: ArrayLike<number>,
  R: number,
  M: number,
  k: number,
  gamma: number,
): Float64Array {
  const w = new Float64Array(R * M);
  for (let r = 1; r < R; r++) {
    for (let m = 0; m < M; m++) {
      const i = r * M + m;
      const improvement = Math.max(0, ce[i - M]! - ce[i]!);
      w[i] = sigmoidScalar(k * (improvement - gamma));
    }
  }
  return w;
}

/**
 * The stage-2 objective (docs/exit-gate.md): binary cross-entropy of each λ_r against the "stop
 * now" label from the loss improvement of step r (slope k, margin γ); the per-step CE is data, not
 * differentiated.
 */
export function stage2Objective(
  gateLogits: Tensor,
  ce: { data: ArrayLike<number>; shape: Shape },
  targets: IntTensor,
  k: number = DEFAULT_K,
  gamma: number = DEFAULT_GAMMA,
): Tensor {
  const op = "stage2Objective";
  const { R, M } = checkObjectiveInputs(gateLogits, ce, targets, op);
  checkFinite(k, "k", op);
  checkFinite(gamma, "gamma", op);
  const w = continuationLabels(ce.data, R, M, k, gamma);
  const a = gateLogits.data;
  const N = countTargets(targets);
  let total = 0;
  for (let r = 1; r < R; r++) {
    for (let m = 0; m < M; m++) {
      if (targets.data[m] === IGNORE_INDEX) continue;
      const i = r * M + m;
      const x = a[i]!;
      // −[w·logsigmoid(−a) + (1 − w)·logsigmoid(a)] = w·softplus(a) + (1 − w)·softplus(−a)
      total += w[i]! * softplusScalar(x) + (1 - w[i]!) * softplusScalar(-x);
    }
  }
  const value = N === 0 ? Number.NaN : total / (N * R);
  return record1(op, [gateLogits], Float32Array.of(value), [1], ([g]) => {
    const ga = new Float32Array(R * M);
    if (N === 0) return [ga];
    const s = g![0]! / (N * R);
    for (let r = 1; r < R; r++) {
      for (let m = 0; m < M; m++) {
        if (targets.data[m] === IGNORE_INDEX) continue;
        const i = r * M + m;
        ga[i] = s * (sigmoidScalar(a[i]!) - 1 + w[i]!);
      }
    }
    return [ga];
  });
}

/** Anything that maps readouts R × [...S, D] to gate logits [R, ...S] (an ExitGate). */
export type GateLike = GenericGateLike<Tensor>;

/**
 * L2 for a gate on a looped model's per-step outputs. The readouts are detached before they
 * reach the gate and the per-step losses are computed without recording, so the backward pass
 * reaches only the gate's parameters (backbone and head get no gradient, frozen or not).
 */
export function stage2Loss(
  gate: GateLike,
  readouts: readonly Tensor[],
  logitsPerStep: readonly Tensor[],
  targets: IntTensor,
  opts: Stage2Options = {},
): Tensor {
  if (logitsPerStep.length !== readouts.length) {
    throw new Error(
      `stage2Loss: logitsPerStep has ${logitsPerStep.length} steps, expected ${readouts.length} like readouts`,
    );
  }
  const ce = perStepCrossEntropyDetached(logitsPerStep, targets);
  const a = gate.logits(readouts.map(detach));
  return stage2Objective(a, ce, targets, opts.k ?? DEFAULT_K, opts.gamma ?? DEFAULT_GAMMA);
}
