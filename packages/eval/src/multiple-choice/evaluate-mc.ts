/*
 * Multiple-choice evaluation: build the harness requests for every (item, choice), score them
 * with a log-likelihood function (a model's loop steps, or any stand-in), and report acc,
 * acc_norm and acc_bytes per loop step.
 */

import {
  type LoglikRequest,
  type McTokenizer,
  mcRequests,
  type RequestOptions,
} from "./harness-encode.js";
import type { McItem } from "./mc-items.js";
import { type McMetrics, mcMetrics } from "./mc-metrics.js";
import type { LoglikelihoodFn } from "./model-loglik.js";

/** Multiple-choice metrics at one loop step (1-based `step`). */
export interface McStepResult extends McMetrics {
  step: number;
}

/** What `evaluateMultipleChoice` returns: metrics per loop step and every log-likelihood. */
export interface McResult {
  /** One entry per loop step (per array the scorer returns). */
  steps: McStepResult[];
  /** `loglik[r][i][c]`: step r+1, item i, choice c. */
  loglik: number[][][];
}

/** Regroup flat item-major request scores into per-item choice arrays. */
function groupByItem(items: readonly McItem[], flat: ArrayLike<number>): number[][] {
  const n = items.reduce((a, it) => a + it.choices.length, 0);
  if (flat.length !== n)
    throw new Error(`groupByItem: expected ${n} scores (one per item choice), got ${flat.length}`);
  let k = 0;
  return items.map((it) => it.choices.map(() => flat[k++]!));
}

/**
 * Score multiple-choice items the lm-evaluation-harness way: encode every (context, choice) pair,
 * ask `loglik` for each continuation's log-likelihood at every loop step, and report acc, acc_norm
 * and acc_bytes per step.
 */
export function evaluateMultipleChoice(
  items: readonly McItem[],
  tokenizer: McTokenizer,
  loglik: LoglikelihoodFn,
  opts: RequestOptions = {},
): McResult {
  if (items.length === 0) throw new Error("evaluateMultipleChoice: no items");
  const requests: LoglikRequest[] = mcRequests(items, tokenizer, opts);
  const perStep = loglik(requests);
  if (perStep.length === 0) throw new Error("evaluateMultipleChoice: the scorer returned no steps");
  const grouped = perStep.map((flat) => groupByItem(items, flat));
  return {
    steps: grouped.map((lls, r) => ({ step: r + 1, ...mcMetrics(items, lls) })),
    loglik: grouped,
  };
}
