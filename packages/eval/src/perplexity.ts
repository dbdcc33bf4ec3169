/*
 * Perplexity per loop step on packed token batches:
 *   NLL(r) = −(1/N) Σ_{targets y ≠ −100} log softmax(logits(r)[b, t])_y,   PPL(r) = exp(NLL(r))
 * (N = number of non-ignored targets; sums in float64). With a gate and thresholds q, the
 * per-token exit step z = thresholdExit(pdf, q) picks which step's log-probability counts, giving
 * the PPL at the mean depth of that q.
 */

import type { ExitRule } from "@loop/exit-gate";
import type { Batch } from "@loop/tasks";
import { IGNORE_INDEX } from "@loop/tensor";
import {
  type Evaluated,
  evaluateWith,
  type FoldSetup,
  type OnKernels,
  type StepOutputs,
} from "./eval-model.js";
import { type ExitSummary, exitSummary, tallyExits } from "./exit-tally.js";
import { logProbAt } from "./log-prob.js";
import { type RuleSummary, ruleSummary, tallyRuleExits } from "./rule-exits.js";

/** Perplexity at one loop step (1-based `step`): mean NLL in nats per token and exp of it. */
export interface StepPerplexity {
  step: number;
  /** Mean negative log-likelihood (nats per token). */
  nll: number;
  ppl: number;
}

/**
 * Perplexity when the exit gate picks each token's loop step at one threshold, with the exit
 * statistics.
 */
export interface GatedPerplexity extends ExitSummary {
  nll: number;
  ppl: number;
}

/** Perplexity when an exit rule picks each token's loop step, with the exit statistics. */
export interface RulePerplexity extends RuleSummary {
  nll: number;
  ppl: number;
}

/**
 * What `evaluatePerplexity` returns: perplexity at every loop step and, with a gate, at every
 * threshold.
 */
export interface PerplexityResult {
  metric: "ppl";
  steps: StepPerplexity[];
  gated: GatedPerplexity[];
  /** One entry per exit rule asked for (`exits`), in that order. */
  exits: RulePerplexity[];
  /** Non-ignored target tokens scored. */
  tokens: number;
}

/** Options of `evaluatePerplexity`: exit thresholds and the CPU kernels to run on. */
export interface PerplexityOptions extends OnKernels {
  qs?: readonly number[];
  /** Exit rules to evaluate (docs/exit-gate.md "Exit rules"; gate:<q> needs a gate). */
  exits?: readonly ExitRule[];
}

/** The per-batch fold of the perplexity evaluation. */
function perplexityFold({ R, V, tallies, rules }: FoldSetup) {
  const nllSum = new Float64Array(R);
  const gatedSum = new Float64Array(tallies.length);
  const ruleSum = new Float64Array(rules.length);
  let tokens = 0;
  const add = (batch: Batch, i: number, out: StepOutputs) => {
    const [B, T] = batch.shape;
    const tg = batch.targets;
    // lp[r][m]: log p of the target at position m under step r (0 where ignored).
    const lp = out.logits.map((l) => {
      const a = new Float64Array(B * T);
      for (let m = 0; m < B * T; m++) {
        const y = tg[m]!;
        if (y === IGNORE_INDEX) continue;
        if (y < 0 || y >= V)
          throw new Error(`batches[${i}].targets[${m}] = ${y} is outside [0, ${V}) and not −100`);
        a[m] = logProbAt(l.data, m, V, y);
      }
      return a;
    });
    for (let m = 0; m < B * T; m++) if (tg[m] !== IGNORE_INDEX) tokens++;
    lp.forEach((a, r) => {
      let s = 0;
      for (let m = 0; m < a.length; m++) s += a[m]!;
      nllSum[r]! -= s;
    });
    // Σ log p of the targets, each token's at the loop step `z` (1-based) picked for it
    const selected = (z: ArrayLike<number>) => {
      let s = 0;
      for (let m = 0; m < B * T; m++) if (tg[m] !== IGNORE_INDEX) s += lp[z[m]! - 1]![m]!;
      return s;
    };
    tallies.forEach((tally, k) => {
      gatedSum[k]! -= selected(tallyExits(tally, out.pdf!, tg, batch.shape).data);
    });
    rules.forEach((tally, k) => {
      ruleSum[k]! -= selected(tallyRuleExits(tally, out, batch));
    });
  };
  const result = (): PerplexityResult => {
    if (tokens === 0) throw new Error("evaluatePerplexity: no target ≠ −100 in any batch");
    const entry = (sum: number) => ({ nll: sum / tokens, ppl: Math.exp(sum / tokens) });
    return {
      metric: "ppl",
      steps: Array.from(nllSum, (s, r) => ({ step: r + 1, ...entry(s) })),
      gated: tallies.map((t, k) => ({ ...exitSummary(t), ...entry(gatedSum[k]!) })),
      exits: rules.map((t, k) => ({ ...ruleSummary(t), ...entry(ruleSum[k]!) })),
      tokens,
    };
  };
  return { add, result };
}

/** Every batch scored by `model` (a model here, or a source of its outputs: a GPU). */
export function evaluatePerplexity(
  model: Evaluated,
  batches: Iterable<Batch>,
  opts: PerplexityOptions = {},
): Promise<PerplexityResult> {
  return evaluateWith("evaluatePerplexity", model, batches, opts, perplexityFold);
}
