/*
 * The exit gate's training objectives written once over any backend's kernels
 * (docs/exit-gate.md "Training"); the CPU's fused float64 twins (stage1.ts, stage2.ts) are what
 * the tests hold these to. With ℓ(r) the per-token cross-entropy of step r's logits, p and
 * u = ln p from gate-on.ts, λ = sigmoid(a) and N the targets ≠ −100:
 *   L1 = (1/N) Σ_m Σ_r p(r)·(ℓ(r) + β·u(r))          (expected CE − β·entropy)
 *   w(r) = sigmoid(k·(max(0, ℓ(r−1) − ℓ(r)) − γ))    (ℓ constant: no gradient)
 *   L2 = (1/(N·R)) Σ_m Σ_{r≥2} [w·softplus(a) + (1 − w)·softplus(−a)],  softplus(x) = −logsigmoid(−x)
 * Stage 2 reaches the gate only: the readouts enter it detached and ℓ is computed unrecorded.
 */
import {
  type AutogradOps,
  DEFAULT_BETA,
  DEFAULT_GAMMA,
  DEFAULT_K,
  type GateLike,
  type ModelOps,
  type Stage1Options,
  type Stage2Options,
} from "@loop/tensor";
import { type GateKernels, logExitPdfOn, stepRows, sumOf } from "./gate-on.js";

/** The kernels the objectives compose. */
export type StageKernels<T, I> = GateKernels<T, I> &
  Pick<ModelOps<T, I>, "ceRows" | "maskedMean"> &
  Pick<AutogradOps<T>, "noGrad">;

/** ℓ [R, ...S]: the per-token cross-entropy of each step's logits R × [...S, V]. */
export function perStepCeOn<T, I>(
  ops: StageKernels<T, I>,
  logitsPerStep: readonly T[],
  targets: I,
): T {
  const tokens = ops.shapeOf(targets);
  const rows = logitsPerStep.map((l) => ops.reshape(ops.ceRows(l, targets), [1, ...tokens]));
  return rows.length === 1 ? rows[0]! : ops.concat(rows, 0);
}

function checkSteps(op: string, R: number, what: string, n: number): void {
  if (n !== R) throw new Error(`${op}: ${what} has ${n} steps, expected R = ${R}`);
}

/** The stage-1 objective L1 (into the gate logits and the per-step logits). */
export function stage1LossOn<T, I>(
  ops: StageKernels<T, I>,
  gateLogits: T,
  logitsPerStep: readonly T[],
  targets: I,
  opts: Stage1Options = {},
): T {
  const R = ops.shapeOf(gateLogits)[0] ?? 0;
  checkSteps("stage1Loss", R, "logitsPerStep", logitsPerStep.length);
  const beta = opts.beta ?? DEFAULT_BETA;
  const u = logExitPdfOn(ops, gateLogits);
  const ce = perStepCeOn(ops, logitsPerStep, targets);
  const terms = ops.binary(
    "mul",
    ops.unary("exp", u),
    ops.binary("add", ce, ops.affine(u, beta, 0)),
  );
  const perToken = ops.reshape(sumOf(ops, stepRows(ops, terms)), ops.shapeOf(targets));
  return ops.maskedMean(perToken, targets);
}

/** A view of `x` with no gradient path (what stage 2 feeds the gate). */
function detached<T, I>(ops: StageKernels<T, I>, x: T): T {
  return ops.noGrad(() => ops.reshape(x, ops.shapeOf(x)));
}

/** The stage-2 objective L2 (into the gate only: readouts detached, per-step losses constant). */
export function stage2LossOn<T, I>(
  ops: StageKernels<T, I>,
  gate: GateLike<T>,
  readouts: readonly T[],
  logitsPerStep: readonly T[],
  targets: I,
  opts: Stage2Options = {},
): T {
  const R = readouts.length;
  checkSteps("stage2Loss", R, "logitsPerStep", logitsPerStep.length);
  const k = opts.k ?? DEFAULT_K;
  const gamma = opts.gamma ?? DEFAULT_GAMMA;
  const tokens = ops.shapeOf(targets);
  // the continuation labels w(r), r ≥ 2: constants
  const labels = ops.noGrad(() => {
    const ce = stepRows(ops, perStepCeOn(ops, logitsPerStep, targets));
    return ce.slice(1).map((l, i) => {
      const gain = ops.unary("relu", ops.binary("sub", ce[i]!, l));
      return ops.unary("sigmoid", ops.affine(gain, k, -k * gamma));
    });
  });
  const a = stepRows(ops, gate.logits(readouts.map((r) => detached(ops, r))));
  checkSteps("stage2Loss", R, "the gate's logits", a.length);
  if (R === 1) return ops.maskedMean(ops.reshape(ops.affine(a[0]!, 0, 0), tokens), targets);
  const terms = labels.map((w, i) => {
    const x = a[i + 1]!;
    // −[w·logsigmoid(−a) + (1 − w)·logsigmoid(a)]
    const stay = ops.binary("mul", w, ops.unary("logsigmoid", ops.unary("neg", x)));
    const stop = ops.binary("mul", ops.affine(w, -1, 1), ops.unary("logsigmoid", x));
    return ops.binary("add", stay, stop);
  });
  const perToken = ops.reshape(sumOf(ops, terms), tokens);
  return ops.affine(ops.maskedMean(perToken, targets), -1 / R, 0);
}
