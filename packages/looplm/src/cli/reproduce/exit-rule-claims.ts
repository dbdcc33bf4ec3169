/*
 * The exit-rules study's reading of each rule, threshold by threshold, over seeds (paired per
 * seed: every number of seed k comes from seed k's model on the same evaluation rows), each claim
 * a family of tests over the rule's thresholds, Holm-adjusted (multiple-comparisons.ts):
 *   (a) beats fixed exit at equal mean depth: gain = metric − fixed exit interpolated at the
 *       rule's own mean exit step d (gate-frontier.ts `fixedAt`); thresholds that exit every
 *       token at step 1 or at R in every seed are fixed exits and left out;
 *   (b) follows p: d(p = 1) ≤ d(p = P) − 1 step, tested on d(P) − d(1) − 1 against 0 (the
 *       thresholds left out of (a) are fixed exits here too, and left out);
 *   (c) keeps the deepest exit's metric within one point (accuracy) while saving ≥ 20 % of the
 *       loop steps: among the thresholds whose d ≤ 0.8·R in every seed, metric − metric(R) + 0.01
 *       against 0.
 * A comparison holds when its Holm-adjusted p < 0.05 with a positive mean, is contradicted with a
 * negative one, else inconclusive. A rule holds a claim when one of its thresholds does (the
 * family-wise error stays at 5 %), is contradicted when every judged threshold is, else
 * inconclusive. The oracle is a bound, reported and not judged; fixed exits are the baseline.
 */

import type { Metric } from "@loop/eval";
import type { ExitRuleKind } from "@loop/exit-gate";
import { fixedAt } from "./gate-frontier.js";
import { type Interval, MIN_SEEDS, tInterval, type VerdictKind } from "./interval.js";
import { holmAdjust, tTestP } from "./multiple-comparisons.js";
import { type MeanSd, meanSd } from "./stats.js";

/** One rule at one threshold in one seed's evaluation. */
export interface RulePoint {
  /** As `--exit` spells it, e.g. "entropy:0.1". */
  rule: string;
  kind: ExitRuleKind;
  /** The rule's threshold (τ, q, ε, k, r), null for the oracle. */
  threshold: number | null;
  mean_step: number;
  value: number;
  histogram: number[];
}

/** Decode time per token at one rule point (batch 1, every row of the timing set). */
export interface RuleTiming {
  rule: string;
  ms_per_token: number;
  /** Mean exit step over the decoded tokens. */
  mean_step: number;
  tokens: number;
}

/** One seed's evaluation: fixed exits, every rule point, each p apart, decode timings. */
export interface SeedRulesResult {
  metric: Metric;
  /** Fixed exit at step r = index + 1. */
  perStep: number[];
  rules: RulePoint[];
  byHops: { hops: number; count: number; perStep: number[]; rules: RulePoint[] }[];
  timing: RuleTiming[];
}

export type Claim = "a" | "b" | "c";

export const CLAIM_TEXT: Record<Claim, string> = {
  a: "beats fixed exit at equal mean depth (interpolated)",
  b: "exit step follows p: p = 1 exits ≥ 1 step before p = 4",
  c: "within 1 point of the deepest exit while saving ≥ 20 % of the loop steps",
};

/** One threshold of one rule on one claim. */
export interface PointTest {
  rule: string;
  kind: ExitRuleKind;
  claim: Claim;
  depth: MeanSd;
  /** The tested quantity per seed (better-oriented, margin subtracted: > 0 is for the claim). */
  values: number[];
  interval: Interval;
  p: number;
  pHolm: number;
  reading: VerdictKind;
}

/** A rule's verdict on one claim, from its thresholds' tests. */
export interface RuleVerdict {
  kind: ExitRuleKind;
  claim: Claim;
  verdict: VerdictKind;
  /** Why, when no threshold could be judged. */
  reason?: string;
  tests: PointTest[];
}

/** Mean steps within this of 1 or R count as "every token at that step". */
const EDGE = 1e-9;

/** The rule kinds the study judges (fixed exits are the baseline, the oracle a bound). */
export const JUDGED_KINDS: readonly ExitRuleKind[] = [
  "gate",
  "confidence",
  "entropy",
  "state-change",
  "agree",
];

function pointOf(rules: readonly RulePoint[], rule: string): RulePoint {
  const p = rules.find((x) => x.rule === rule);
  if (!p) throw new Error(`exit-rules: a seed has no point for ${rule}`);
  return p;
}

function read(pHolm: number, mean: number, n: number): VerdictKind {
  if (n < MIN_SEEDS || !(pHolm < 0.05)) return "inconclusive";
  return mean > 0 ? "holds" : "contradicted";
}

/** Every judged rule's verdict on every claim. */
export function ruleVerdicts(seeds: readonly SeedRulesResult[]): RuleVerdict[] {
  if (seeds.length === 0) throw new Error("ruleVerdicts: no seeds");
  const metric = seeds[0]!.metric;
  const better = (a: number, b: number) => (metric === "accuracy" ? a - b : b - a);
  const R = seeds[0]!.perStep.length;
  const onePoint = metric === "accuracy" ? 0.01 : 1;
  const out: RuleVerdict[] = [];
  // (b) asks how the exit step follows the needed depth p: only a study evaluated per p has one
  // (p-hop); language modelling has no per-token difficulty label, so (b) is not a claim there
  const claims = seeds[0]!.byHops.length >= 2 ? (["a", "b", "c"] as const) : (["a", "c"] as const);
  for (const kind of JUDGED_KINDS) {
    const names = seeds[0]!.rules.filter((r) => r.kind === kind).map((r) => r.rule);
    if (names.length === 0) continue;
    for (const claim of claims) {
      const family: Omit<PointTest, "pHolm" | "reading">[] = [];
      let reason: string | undefined;
      for (const rule of names) {
        const pts = seeds.map((s) => pointOf(s.rules, rule));
        const depths = pts.map((p) => p.mean_step);
        let values: number[] | null = null;
        const edge = depths.every((d) => Math.abs(d - 1) <= EDGE || Math.abs(d - R) <= EDGE);
        if (claim === "a") {
          if (!edge)
            values = seeds.map((s, k) =>
              better(pts[k]!.value, fixedAt(s.perStep, pts[k]!.mean_step)),
            );
        } else if (claim === "b") {
          const hops = seeds[0]!.byHops.map((h) => h.hops);
          if (!edge) {
            const lo = Math.min(...hops);
            const hi = Math.max(...hops);
            const d = (s: SeedRulesResult, p: number) =>
              pointOf(s.byHops.find((h) => h.hops === p)!.rules, rule).mean_step;
            values = seeds.map((s) => d(s, hi) - d(s, lo) - 1);
          }
        } else if (depths.every((d) => d <= 0.8 * R + EDGE))
          values = seeds.map((s, k) => better(pts[k]!.value, s.perStep[R - 1]!) + onePoint);
        if (!values) continue;
        family.push({
          rule,
          kind,
          claim,
          depth: meanSd(depths),
          values,
          interval: tInterval(values),
          p: tTestP(values),
        });
      }
      const adjusted = holmAdjust(family.map((t) => t.p));
      const tests = family.map((t, i) => ({
        ...t,
        pHolm: adjusted[i]!,
        reading: read(adjusted[i]!, t.interval.mean, t.values.length),
      }));
      const verdict: VerdictKind = tests.some((t) => t.reading === "holds")
        ? "holds"
        : tests.length > 0 && tests.every((t) => t.reading === "contradicted")
          ? "contradicted"
          : "inconclusive";
      if (tests.length === 0)
        reason ??=
          claim !== "c"
            ? "every threshold exits all tokens at step 1 or R"
            : "no threshold saves ≥ 20 % of the loop steps in every seed";
      out.push({ kind, claim, verdict, ...(tests.length === 0 ? { reason } : {}), tests });
    }
  }
  return out;
}

/** A rule point aggregated over seeds. */
export interface RuleRow {
  rule: string;
  kind: ExitRuleKind;
  depth: MeanSd;
  value: MeanSd;
  /** Mean exit step per p (mean over seeds), in the order of the seeds' byHops. */
  depthByHops: MeanSd[];
  /** ms per decoded token (mean ± sd over seeds), when timed. */
  msPerToken: MeanSd | null;
}

/** Every rule point (fixed exits, rules, oracle) aggregated over seeds, in the seeds' order. */
export function ruleRows(seeds: readonly SeedRulesResult[]): RuleRow[] {
  return seeds[0]!.rules.map((r) => {
    const pts = seeds.map((s) => pointOf(s.rules, r.rule));
    const timed = seeds.map((s) => s.timing.find((t) => t.rule === r.rule));
    return {
      rule: r.rule,
      kind: r.kind,
      depth: meanSd(pts.map((p) => p.mean_step)),
      value: meanSd(pts.map((p) => p.value)),
      depthByHops: seeds[0]!.byHops.map((h) =>
        meanSd(
          seeds.map(
            (s) => pointOf(s.byHops.find((x) => x.hops === h.hops)!.rules, r.rule).mean_step,
          ),
        ),
      ),
      msPerToken: timed.every((t) => t !== undefined)
        ? meanSd(timed.map((t) => t!.ms_per_token))
        : null,
    };
  });
}

/**
 * Each realisable rule kind's operating point: its cheapest threshold (lowest mean exit step)
 * whose mean metric is within one point of the deepest fixed exit's, else its best threshold.
 */
export function operatingPoints(rows: readonly RuleRow[], metric: Metric, R: number): RuleRow[] {
  const better = (a: number, b: number) => (metric === "accuracy" ? a - b : b - a);
  const onePoint = metric === "accuracy" ? 0.01 : 1;
  const deepest = rows.find((r) => r.rule === `fixed:${R}`);
  if (!deepest) throw new Error(`operatingPoints: no fixed:${R} row`);
  const out: RuleRow[] = [];
  for (const kind of JUDGED_KINDS) {
    const of = rows.filter((r) => r.kind === kind);
    if (of.length === 0) continue;
    const ok = of.filter((r) => better(r.value.mean, deepest.value.mean) >= -onePoint);
    const pick = ok.length
      ? ok.reduce((a, b) => (b.depth.mean < a.depth.mean ? b : a))
      : of.reduce((a, b) => (better(b.value.mean, a.value.mean) > 0 ? b : a));
    out.push(pick);
  }
  return out;
}
