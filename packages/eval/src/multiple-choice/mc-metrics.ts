/*
 * Multiple-choice metrics from per-choice log-likelihoods (lm-evaluation-harness
 * `process_results` for multiple_choice):
 *   acc      = [argmax_i ll_i = label]
 *   acc_norm = [argmax_i ll_i / len(choice_i) = label]   len = characters (Unicode code points,
 *              Python's len) of the choice without the delimiter; equal to the byte length for
 *              ASCII text
 *   acc_bytes = [argmax_i ll_i / utf8Bytes(choice_i) = label]
 * argmax takes the first maximum (numpy). Metrics are means over items.
 */
import type { McItem } from "./mc-items.js";

/**
 * Multiple-choice accuracy over `items`: by raw log-likelihood (acc), per character (acc_norm) and
 * per byte (acc_bytes).
 */
export interface McMetrics {
  acc: number;
  acc_norm: number;
  acc_bytes: number;
  items: number;
}

/** The chosen index of one item under each rule: raw, per-character and per-byte log-likelihood. */
export interface McPrediction {
  pred: number;
  predNorm: number;
  predBytes: number;
}

function argmax(xs: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i]! > xs[best]!) best = i;
  return best;
}

const enc = new TextEncoder();

/** Length of `s` in Unicode code points (the harness's acc_norm denominator). */
export function charLength(s: string): number {
  return [...s].length;
}

/** The predictions for one item given each choice's log-likelihood. */
export function predictItem(item: McItem, lls: readonly number[]): McPrediction {
  if (lls.length !== item.choices.length)
    throw new Error(
      `predictItem: expected ${item.choices.length} log-likelihoods (one per choice), got ${lls.length}`,
    );
  return {
    pred: argmax(lls),
    predNorm: argmax(lls.map((l, i) => l / charLength(item.choices[i]!))),
    predBytes: argmax(lls.map((l, i) => l / enc.encode(item.choices[i]!).length)),
  };
}

/** `lls[i]` holds item i's per-choice log-likelihoods. */
export function mcMetrics(
  items: readonly McItem[],
  lls: readonly (readonly number[])[],
): McMetrics {
  if (lls.length !== items.length)
    throw new Error(
      `mcMetrics: expected ${items.length} rows of log-likelihoods, got ${lls.length}`,
    );
  if (items.length === 0) throw new Error("mcMetrics: no items");
  let acc = 0;
  let accNorm = 0;
  let accBytes = 0;
  items.forEach((it, i) => {
    const p = predictItem(it, lls[i]!);
    if (p.pred === it.label) acc++;
    if (p.predNorm === it.label) accNorm++;
    if (p.predBytes === it.label) accBytes++;
  });
  const n = items.length;
  return { acc: acc / n, acc_norm: accNorm / n, acc_bytes: accBytes / n, items: n };
}
