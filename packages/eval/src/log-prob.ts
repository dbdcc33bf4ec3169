/**
 * Log-probabilities read from raw logits rows, in float64:
 *   log p(y | row) = x_y − (max + log Σ_v exp(x_v − max))
 * Shape contract: logits is row-major [rows, V]; `row` indexes the rows. This is the value whose
 * negative mean `crossEntropy` (@loop/tensor) returns; evaluators use it directly because they
 * need per-token values and no tape.
 */
export function logProbAt(
  logits: ArrayLike<number>,
  row: number,
  V: number,
  target: number,
): number {
  if (!Number.isInteger(target) || target < 0 || target >= V)
    throw new Error(`logProbAt: target must be a token id in [0, ${V}), got ${target}`);
  const o = row * V;
  if (o < 0 || o + V > logits.length)
    throw new Error(`logProbAt: row ${row} is outside logits of ${logits.length / V} rows`);
  let max = Number.NEGATIVE_INFINITY;
  for (let v = 0; v < V; v++) {
    const x = logits[o + v]!;
    if (x > max) max = x;
  }
  let s = 0;
  for (let v = 0; v < V; v++) s += Math.exp(logits[o + v]! - max);
  return logits[o + target]! - max - Math.log(s);
}

/** Whether `target` is the (first) argmax of row `row` — the harness's `is_greedy`. */
export function isArgmax(
  logits: ArrayLike<number>,
  row: number,
  V: number,
  target: number,
): boolean {
  const o = row * V;
  let best = 0;
  for (let v = 1; v < V; v++) if (logits[o + v]! > logits[o + best]!) best = v;
  return best === target;
}
