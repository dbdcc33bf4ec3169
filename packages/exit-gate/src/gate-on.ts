/*
 * The exit gate's ops written once over any backend's kernels (docs/exit-gate.md "Gate and exit
 * distribution"); every device backend runs these (the CPU model its fused float64 twins,
 * gate-logits.ts and exit-pdf.ts, which the tests hold these to):
 *   a(r) = readout(r) · weightᵀ + bias                    readouts R × [...S, D] → a [R, ...S]
 *   u(r) = ln p(r) = ln λ(r) + Σ_{j<r} ln(1 − λ(j)) (r < R),  u(R) = Σ_{j<R} ln(1 − λ(j))
 * with ln λ = logsigmoid(a) and ln(1 − λ) = logsigmoid(−a): exact for any |a|, so Σ_r p(r) = 1
 * up to rounding and no step's mass underflows to a NaN gradient. Gradients come from the
 * kernels' own backwards.
 */
import type { ModelOps } from "@loop/tensor";

/** The kernels the gate's ops compose. */
export type GateKernels<T, I> = Pick<
  ModelOps<T, I>,
  "linear" | "binary" | "reshape" | "concat" | "split" | "unary" | "affine" | "shapeOf"
>;

/** a [R, ...S] from readouts R × [...S, D], weight [1, D], bias [1]. */
export function gateLogitsOn<T, I>(
  ops: GateKernels<T, I>,
  readouts: readonly T[],
  weight: T,
  bias: T,
): T {
  if (readouts.length === 0) throw new Error("gateLogits: no readouts");
  const tokens = ops.shapeOf(readouts[0]!).slice(0, -1);
  const rows = readouts.map((x) =>
    ops.reshape(ops.binary("add", ops.linear(x, weight), bias), [1, ...tokens]),
  );
  return rows.length === 1 ? rows[0]! : ops.concat(rows, 0);
}

/** Each step's row of a [R, ...S], as R tensors [1, ...S]. */
export function stepRows<T, I>(ops: GateKernels<T, I>, a: T): T[] {
  const R = ops.shapeOf(a)[0] ?? 0;
  if (R < 1) throw new Error(`exit gate: gate logits [${ops.shapeOf(a)}] have no loop steps`);
  return R === 1 ? [a] : ops.split(a, new Array<number>(R).fill(1), 0);
}

/** Σ of `xs` (equal shapes), left to right. */
export function sumOf<T, I>(ops: Pick<ModelOps<T, I>, "binary">, xs: readonly T[]): T {
  return xs.slice(1).reduce((s, x) => ops.binary("add", s, x), xs[0]!);
}

/** u = ln p [R, ...S] from gate logits a [R, ...S] (see the file comment). */
export function logExitPdfOn<T, I>(ops: GateKernels<T, I>, a: T): T {
  const rows = stepRows(ops, a);
  const R = rows.length;
  // R = 1: all the mass on the one step (u = 0, no gradient into a)
  if (R === 1) return ops.affine(a, 0, 0);
  const u: T[] = [];
  let logSurvival: T | null = null; // ln S(r−1)
  for (let r = 0; r < R - 1; r++) {
    const x = rows[r]!;
    const logStop = ops.unary("logsigmoid", x);
    const logGo = ops.unary("logsigmoid", ops.unary("neg", x));
    u.push(logSurvival ? ops.binary("add", logSurvival, logStop) : logStop);
    logSurvival = logSurvival ? ops.binary("add", logSurvival, logGo) : logGo;
  }
  u.push(logSurvival!);
  return ops.concat(u, 0);
}

/** p [R, ...S] from gate logits a [R, ...S]. */
export function exitPdfOn<T, I>(ops: GateKernels<T, I>, a: T): T {
  return ops.unary("exp", logExitPdfOn(ops, a));
}
