/*
 * The range of a metric value read back from a file someone else may have written (a run's log,
 * a seed record): a finite accuracy in [0, 1] or a finite perplexity ≥ 1.
 */
import type { Metric } from "@loop/eval";

/** `v` in a message: JSON, cut to 40 characters ("absent" for undefined). */
export function shown(v: unknown): string {
  const t = v === undefined ? "absent" : JSON.stringify(v);
  return t.length > 40 ? `${t.slice(0, 37)}...` : t;
}

/**
 * Null when `v` is a value of `metric`, else what is wrong with it, as the rest of a sentence
 * about it ("is an accuracy of 7.5, outside [0, 1]").
 */
export function metricRangeProblem(metric: Metric, v: unknown): string | null {
  if (typeof v !== "number" || !Number.isFinite(v))
    return `must be a finite number, got ${shown(v)}`;
  if (metric === "accuracy" && (v < 0 || v > 1)) return `is an accuracy of ${v}, outside [0, 1]`;
  if (metric === "ppl" && v < 1) return `is a perplexity of ${v}, below 1`;
  return null;
}
