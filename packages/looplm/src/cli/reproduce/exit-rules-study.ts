/*
 * The `exit-rules` study: which exit rule finds the easy tokens? On the `gate-mixed` models (p-hop
 * with p drawn per sequence; their seeds are that study's, trained there or kept from it), every
 * exit rule of docs/exit-gate.md swept over its threshold — the gate (the study's q values),
 * softmax confidence and entropy (CALM), the readout's relative change (Ouro's hidden-state rule),
 * argmax agreement, the fixed exits and the oracle — scored on the same held-out rows, as a whole
 * and for each p apart, with the decode time per token of each point (batch 1).
 */
import type { ExitRule } from "@loop/exit-gate";
import { gateMixed, lmGate } from "./gate-studies.js";
import type { GateStudyDef } from "./gate-study-types.js";
import type { Scale } from "./study-types.js";

export interface ExitRulesStudyDef {
  name: "exit-rules" | "exit-rules-lm";
  title: string;
  notes: string;
  /** The gate study whose models the rules run on (its seeds, folders and records). */
  source: GateStudyDef;
  /** Every rule point, fixed exits and the oracle included, in table order. */
  rules: ExitRule[];
  /** Evaluation rows decoded one token at a time (batch 1) to time each rule point. */
  timingRows: number;
}

/**
 * The thresholds of each rule (the gate's are the source study's q values), from early to late
 * exits; chosen to span each rule's range of mean exit steps on seed 1's model (a readout
 * changes by 50–80 % between loop steps there, so ε below 0.5 never exits early).
 */
export const RULE_SWEEP = {
  confidence: [0.5, 0.8, 0.9, 0.95, 0.99, 0.999],
  entropy: [1, 0.5, 0.2, 0.1, 0.05, 0.02],
  "state-change": [0.8, 0.7, 0.6, 0.55, 0.5],
} as const;

/** Every rule point of a sweep on a gate study of R loop steps, in table order. */
function ruleList(
  source: GateStudyDef,
  sweep: typeof RULE_SWEEP | typeof LM_RULE_SWEEP,
): ExitRule[] {
  const R = source.loops;
  return [
    ...Array.from({ length: R }, (_v, i): ExitRule => ({ kind: "fixed", step: i + 1 })),
    ...source.qs.map((q): ExitRule => ({ kind: "gate", q })),
    ...sweep.confidence.map((tau): ExitRule => ({ kind: "confidence", tau })),
    ...sweep.entropy.map((tau): ExitRule => ({ kind: "entropy", tau })),
    ...sweep["state-change"].map((eps): ExitRule => ({ kind: "state-change", eps })),
    ...Array.from({ length: R - 2 }, (_v, i): ExitRule => ({ kind: "agree", k: i + 1 })),
    { kind: "oracle" },
  ];
}

/**
 * The LM's thresholds: a next-token softmax over 1,024 tokens is rarely sure (confidence) and
 * spreads over several nats (entropy; ln 1024 = 6.93).
 */
export const LM_RULE_SWEEP = {
  confidence: [0.2, 0.3, 0.5, 0.7, 0.9],
  entropy: [4, 3, 2, 1, 0.5],
  "state-change": [0.8, 0.6, 0.4, 0.2, 0.1],
} as const;

/** The exit rules on the `lm-gate` models (SOTU next-token prediction, perplexity). */
export function exitRulesLm(scale: Scale): ExitRulesStudyDef {
  const source = lmGate(scale);
  const R = source.loops;
  return {
    name: "exit-rules-lm",
    title:
      "Exit rules on language modelling (SOTU): the gate against confidence, entropy, state change, agreement and the oracle",
    notes: `The \`lm-gate\` study's models (the \`lm\` study's SOTU 2⊗${R} with a gate trained through gate1 and gate2; its seeds and records), every rule decided online per token (docs/exit-gate.md "Exit rules") and scored by validation perplexity on the same ${source.evalCount} held-out windows; decode time per token of each rule point on ${scale === "cpu" ? 4 : 16} of those windows decoded one token at a time (batch 1; the median of 5 rounds that take the rules in turn). Claims per rule, paired over seeds with Holm over its thresholds: (a) a lower perplexity than fixed exit at equal mean depth (interpolated); (c) within 1 perplexity point of fixed exit ${R} while saving ≥ 20 % of the loop steps ((b) needs a per-difficulty evaluation, which text has not).`,
    source,
    rules: ruleList(source, LM_RULE_SWEEP),
    timingRows: scale === "cpu" ? 4 : 16,
  };
}

export function exitRules(scale: Scale): ExitRulesStudyDef {
  const source = gateMixed(scale);
  const R = source.loops;
  const rules = ruleList(source, RULE_SWEEP);
  return {
    name: "exit-rules",
    title:
      "Which exit rule finds the easy tokens? The gate against confidence, entropy, state change, agreement and the oracle",
    notes: `The \`gate-mixed\` study's models (p-hop, |Σ| = 4, n = 32, p drawn per sequence from 1..${R}, 1⊗${R} with its gate trained through pretrain → gate1 → gate2; its seeds and records), every rule decided online per token from the steps it has run (docs/exit-gate.md "Exit rules") and scored on the same ${source.evalCount} held-out sequences, as a whole and for each p apart; decode time per token of each rule point measured on ${scale === "cpu" ? 32 : 128} of those sequences decoded one token at a time (batch 1, early-exit decoding: the steps after the exit are skipped; the median of 5 rounds that take the rules in turn). Claims per rule, paired over seeds with Holm over its thresholds: (a) beats fixed exit at equal mean depth (interpolated); (b) p = 1 exits ≥ 1 step before p = ${R}; (c) within 1 point of fixed exit ${R} while saving ≥ 20 % of the loop steps.`,
    source,
    rules,
    timingRows: scale === "cpu" ? 32 : 128,
  };
}
