/*
 * Exact-match accuracy of a task's evaluation set, per loop step and under exit-gate selection.
 *   per step r:  prediction = argmax_v logits(r)[b, t, v] at every scored position (target ≠ −100)
 *   gated at q:  z = thresholdExit(pdf, q) per token (docs/exit-gate.md "Inference"); prediction =
 *                argmax logits(z)[b, t, ·]; reported with the mean of z and its histogram over
 *                the scored positions.
 * The scorer defaults to the task's own `score` (plain exact match of scoreTargets).
 */

import type { ExitRule } from "@loop/exit-gate";
import { argmaxLogits, type Batch, type Score, scoreTargets } from "@loop/tasks";
import {
  type Evaluated,
  evaluateWith,
  type FoldSetup,
  type OnKernels,
  type StepOutputs,
} from "./eval-model.js";
import { type ExitSummary, exitSummary, tallyExits } from "./exit-tally.js";
import { type RuleSummary, ruleSummary, tallyRuleExits } from "./rule-exits.js";

/** Accuracy at one loop step: correct of total scored positions. */
export interface StepScore {
  /** 1-based loop step. */
  step: number;
  correct: number;
  total: number;
  accuracy: number;
}

/**
 * Accuracy when the exit gate picks each token's loop step at one threshold q, with the exit
 * statistics.
 */
export interface GatedScore extends ExitSummary {
  correct: number;
  total: number;
  accuracy: number;
}

/** Accuracy when an exit rule picks each token's loop step, with the exit statistics. */
export interface RuleScore extends RuleSummary {
  correct: number;
  total: number;
  accuracy: number;
}

/**
 * What `evaluateAccuracy` returns: accuracy at every loop step and, with a gate, at every
 * threshold.
 */
export interface AccuracyResult {
  metric: "accuracy";
  /** One entry per loop step r = 1..R. */
  steps: StepScore[];
  /** One entry per threshold (sorted by q); empty without a gate or thresholds. */
  gated: GatedScore[];
  /** One entry per exit rule asked for (`exits`), in that order. */
  exits: RuleScore[];
  /** Rows (examples) evaluated. */
  examples: number;
}

/** Options of `evaluateAccuracy`: exit thresholds, a custom scorer, the CPU kernels to run on. */
export interface AccuracyOptions extends OnKernels {
  /** Exit thresholds to evaluate with the gate (ignored for a model without one). */
  qs?: readonly number[];
  /** Exit rules to evaluate (docs/exit-gate.md "Exit rules"; gate:<q> needs a gate). */
  exits?: readonly ExitRule[];
  /** Scorer of predicted ids against a batch (default: exact match at scored positions). */
  score?: (batch: Batch, predicted: Int32Array) => Score;
}

/** Correct and total scored positions, counted over batches. */
interface Count {
  correct: number;
  total: number;
}

/** A summary with its count and the accuracy it gives (0 when nothing was scored). */
function withAccuracy<S>(summary: S, c: Count): S & Count & { accuracy: number } {
  const accuracy = c.total === 0 ? 0 : c.correct / c.total;
  return { ...summary, correct: c.correct, total: c.total, accuracy };
}

/** The per-batch fold of the accuracy evaluation. */
function accuracyFold({ R, V, tallies, rules }: FoldSetup, opts: AccuracyOptions) {
  const score = opts.score ?? scoreTargets;
  const steps: Count[] = Array.from({ length: R }, () => ({ correct: 0, total: 0 }));
  const gatedCounts: Count[] = tallies.map(() => ({ correct: 0, total: 0 }));
  const ruleCounts: Count[] = rules.map(() => ({ correct: 0, total: 0 }));
  let examples = 0;
  const add = (batch: Batch, _i: number, out: StepOutputs) => {
    examples += batch.shape[0];
    const preds = out.logits.map((l) => argmaxLogits(l.data, V));
    const count = (c: Count, predicted: Int32Array) => {
      const s = score(batch, predicted);
      c.correct += s.correct;
      c.total += s.total;
    };
    // each token's prediction at the loop step `z` (1-based) picked for it
    const selected = (z: ArrayLike<number>) =>
      Int32Array.from({ length: z.length }, (_v, m) => preds[z[m]! - 1]![m]!);
    preds.forEach((p, r) => {
      count(steps[r]!, p);
    });
    tallies.forEach((tally, k) => {
      const z = tallyExits(tally, out.pdf!, batch.targets, batch.shape);
      count(gatedCounts[k]!, selected(z.data));
    });
    rules.forEach((tally, k) => {
      count(ruleCounts[k]!, selected(tallyRuleExits(tally, out, batch)));
    });
  };
  const result = (): AccuracyResult => ({
    metric: "accuracy",
    steps: steps.map((c, r) => withAccuracy({ step: r + 1 }, c)),
    gated: tallies.map((t, k) => withAccuracy(exitSummary(t), gatedCounts[k]!)),
    exits: rules.map((t, k) => withAccuracy(ruleSummary(t), ruleCounts[k]!)),
    examples,
  });
  return { add, result };
}

/** Every batch scored by `model` (a model here, or a source of its outputs: a GPU). */
export function evaluateAccuracy(
  model: Evaluated,
  batches: Iterable<Batch>,
  opts: AccuracyOptions = {},
): Promise<AccuracyResult> {
  return evaluateWith("evaluateAccuracy", model, batches, opts, (s) => accuracyFold(s, opts));
}
