/**
 * Names for threshold-exit outputs (docs/formats.md "Golden vectors"): q written with up to 4
 * decimals and no trailing zeros — formatQ(0.5) = "0.5", formatQ(1) = "1", formatQ(0) = "0" —
 * used as `exit.step.q{q}`.
 */
export function formatQ(q: number): string {
  if (!Number.isFinite(q)) throw new Error(`formatQ: q must be a finite number, got ${q}`);
  // Number() drops the trailing zeros of toFixed; String(-0) is "0".
  return String(Number(q.toFixed(4)));
}

/** The metric name under which the exit steps at threshold q are logged, e.g. `exit.step.q0.5`. */
export function exitStepName(q: number): string {
  return `exit.step.q${formatQ(q)}`;
}
