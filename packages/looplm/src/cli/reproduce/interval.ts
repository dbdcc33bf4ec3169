/*
 * Confidence intervals for study verdicts: the two-sided Student-t interval of a mean
 * (mean ± t_{1−α/2, n−1}·sd/√n), and the three-way reading of an interval against the margin a
 * claim names. Paired: a claim "a beats b" is judged on the per-seed differences a_k − b_k, where
 * both models of seed k saw the same data, so seed-to-seed variation common to both cancels.
 */
import studentTQuantile from "@stdlib/stats-base-dists-t-quantile";
import { meanSd, seedCount } from "./stats.js";

/** Fewer seeds than this give no verdict: with 2–4 seeds a t-interval is too wide to decide. */
export const MIN_SEEDS = 5;

export const CONFIDENCE = 0.95;

export interface Interval {
  mean: number;
  sd: number;
  n: number;
  /** Bounds of the 95 % t-interval of the mean; NaN for a single value. */
  lo: number;
  hi: number;
}

/** The two-sided `level` t-interval of the mean of `values`. */
export function tInterval(values: readonly number[], level = CONFIDENCE): Interval {
  const m = meanSd(values);
  if (m.n < 2) return { ...m, lo: Number.NaN, hi: Number.NaN };
  const half = (studentTQuantile(1 - (1 - level) / 2, m.n - 1) * m.sd) / Math.sqrt(m.n);
  return { ...m, lo: m.mean - half, hi: m.mean + half };
}

/** a_k − b_k for every seed k (both arrays in seed order). */
export function pairedDifferences(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length)
    throw new Error(
      `paired differences need as many values on each side (${a.length} vs ${b.length})`,
    );
  return a.map((v, k) => v - b[k]!);
}

export type VerdictKind = "holds" | "inconclusive" | "contradicted";

export interface Reading {
  kind: VerdictKind;
  /** Why, when not read off the interval alone ("3 seeds < 5"). */
  reason?: string;
}

/**
 * An interval of "how much better the claim's side is" against the margin the claim needs:
 * holds when the whole interval lies above it, contradicted when the whole interval lies below,
 * inconclusive when it straddles the margin or there are fewer than MIN_SEEDS seeds.
 */
export function readInterval(ci: Interval, margin: number, minSeeds = MIN_SEEDS): Reading {
  if (ci.n < minSeeds) return { kind: "inconclusive", reason: `${seedCount(ci.n)} < ${minSeeds}` };
  if (ci.lo > margin) return { kind: "holds" };
  if (ci.hi < margin) return { kind: "contradicted" };
  return { kind: "inconclusive" };
}
