/*
 * Accumulates exit-rule statistics over batches (docs/exit-gate.md "Exit rules"): for each rule,
 * every position's exit step z (decided online from its own steps ≤ z: `ruleExitSteps`) and the
 * histogram of z ∈ 1..R over the scored positions (target ≠ −100).
 */
import {
  type ExitRule,
  exitHistogram,
  formatExitRule,
  isRealisable,
  ruleExitSteps,
} from "@loop/exit-gate";
import type { Batch } from "@loop/tasks";
import { intTensor } from "@loop/tensor";
import type { StepOutputs } from "./eval-model.js";
import { meanStepOf } from "./exit-tally.js";

/** One rule's exit-step histogram so far. */
export interface RuleTally {
  rule: ExitRule;
  /** counts[r − 1]: scored positions exiting at step r. */
  histogram: number[];
}

export function newRuleTallies(rules: readonly ExitRule[], R: number): RuleTally[] {
  return rules.map((rule) => ({ rule, histogram: new Array<number>(R).fill(0) }));
}

/** Exit steps of every position of `batch` under the tally's rule, added to its histogram. */
export function tallyRuleExits(tally: RuleTally, out: StepOutputs, batch: Batch): Int32Array {
  const R = out.logits.length;
  const M = batch.targets.length;
  const z = ruleExitSteps(
    tally.rule,
    {
      logits: out.logits.map((l) => l.data),
      states: out.readouts?.map((s) => s.data),
      pdf: out.pdf ?? undefined,
      targets: batch.targets,
    },
    M,
    R,
  );
  const h = exitHistogram(
    intTensor(z, [...batch.shape]),
    R,
    intTensor(batch.targets, [...batch.shape]),
  );
  h.forEach((c, r) => {
    tally.histogram[r]! += c;
  });
  return z;
}

/** A rule's exits as results report them: its name, whether it is realisable, mean step, histogram. */
export interface RuleSummary {
  /** The rule as `--exit` spells it, e.g. "entropy:0.5". */
  rule: string;
  /** false for the oracle (it reads the target). */
  realisable: boolean;
  meanStep: number;
  histogram: number[];
}

export function ruleSummary(t: RuleTally): RuleSummary {
  return {
    rule: formatExitRule(t.rule),
    realisable: isRealisable(t.rule),
    meanStep: meanStepOf(t.histogram),
    histogram: t.histogram,
  };
}
