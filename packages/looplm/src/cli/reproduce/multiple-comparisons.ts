/*
 * Several thresholds q of one gate, tested on the same seeds, are a family of tests: read one by
 * one at 5 % each, the chance that some point "holds" by luck grows with their number. Each
 * point's two-sided one-sample t-test p value (of its per-seed gains against 0) is adjusted with
 * Holm's step-down method, which controls the family-wise error rate without assuming the tests
 * independent: sort the m p values, multiply the i-th smallest (0-based) by m − i, keep the
 * sequence non-decreasing, cap at 1.
 */
import studentTCdf from "@stdlib/stats-base-dists-t-cdf";
import { meanSd } from "./stats.js";

/** Two-sided p value of the one-sample t-test of mean(values) = 0; NaN for fewer than 2 values. */
export function tTestP(values: readonly number[]): number {
  const m = meanSd(values);
  if (m.n < 2) return Number.NaN;
  if (m.sd === 0) return m.mean === 0 ? 1 : 0;
  const t = m.mean / (m.sd / Math.sqrt(m.n));
  return 2 * (1 - studentTCdf(Math.abs(t), m.n - 1));
}

/** Holm-adjusted p values, in the order given (NaN entries stay NaN and do not count in m). */
export function holmAdjust(ps: readonly number[]): number[] {
  const idx = ps.map((p, i) => ({ p, i })).filter((x) => !Number.isNaN(x.p));
  idx.sort((a, b) => a.p - b.p);
  const out = ps.map(() => Number.NaN);
  let running = 0;
  idx.forEach(({ p, i }, k) => {
    running = Math.max(running, Math.min(1, (idx.length - k) * p));
    out[i] = running;
  });
  return out;
}
