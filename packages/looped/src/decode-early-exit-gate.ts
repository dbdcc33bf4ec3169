/**
 * The exit rule of early-exit decoding, one loop step at a time (docs/exit-gate.md "Gate and exit
 * distribution", "Inference: threshold exit"):
 *   a(r) = exit_gate.weight · readout(r) + exit_gate.bias,   λ(r) = sigmoid(a(r))
 *   CDF(n) = Σ_{r≤n} p(r) = 1 − S(n),  S(n) = Π_{j≤n} (1 − λ(j))   (the pdf telescopes)
 *   exit at the first n < R with CDF(n) ≥ q  ⇔  ln S(n) ≤ ln(1 − q),  else at R.
 * ln S(n) = Σ_j logsigmoid(−a(j)) is accumulated in float64, so the rule is decided online (step
 * n needs only steps ≤ n) and exactly at both ends: q = 0 (ln 1 = 0) exits at step 1, q = 1
 * (ln 0 = −∞) never exits before R, whatever the rounding of Σ p.
 * Shapes: readout rows [M, D] (row-major), weight [D], bias [1].
 */

/** ln(1 − q), the bound on ln S(n); validates q ∈ [0, 1]. */
export function logSurvivalBound(q: number, op: string): number {
  if (!(q >= 0 && q <= 1)) throw new Error(`${op}: q must be in [0, 1], got ${q}`);
  return Math.log1p(-q);
}

/** logsigmoid(−a) = −softplus(a) = ln(1 − sigmoid(a)), stable for any a. */
export function logOneMinusSigmoid(a: number): number {
  return -(Math.max(a, 0) + Math.log1p(Math.exp(-Math.abs(a))));
}

/** Gate logit of one readout row: weight · row + bias (float64 accumulation). */
export function gateLogitRow(
  rows: Float32Array,
  row: number,
  weight: Float32Array,
  bias: number,
): number {
  const D = weight.length;
  const o = row * D;
  let acc = 0;
  for (let d = 0; d < D; d++) acc += weight[d]! * rows[o + d]!;
  return acc + bias;
}
