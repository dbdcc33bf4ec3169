/*
 * The gate against fixed exit, q by q, three ways, each a family of tests over the judged q
 * values (points whose gate runs all R steps in every seed are fixed exit R and left out):
 * - "equal depth": fixed exit interpolated at the gate's own mean exit step d (the frontier);
 * - "⌈d⌉": fixed exit at the first whole step at or above d (as deep or deeper than the gate);
 * - "R": the deepest fixed exit, the comparison the paper makes (gate at mean step 3.00 against
 *   fixed loop 4).
 * Every comparison is paired per seed (gate − fixed exit of the same seed's model, at that seed's
 * own d), with its 95 % t-interval and its two-sided t-test p value, Holm-adjusted within its
 * family (multiple-comparisons.ts).
 */
import { formatTable, type Metric } from "@loop/eval";
import { fixedAt, type SeedGateResult } from "./gate-frontier.js";
import { type Interval, tInterval } from "./interval.js";
import { holmAdjust, tTestP } from "./multiple-comparisons.js";

/** The three fixed exits each gate point is compared with, in the order the table lists them. */
export const AGAINST = ["equal depth", "⌈d⌉", "R"] as const;
/** What a gate point is compared with (see the file's comment). */
export type Against = (typeof AGAINST)[number];

/** One gate point against one fixed exit. */
export interface GateComparison {
  q: number;
  against: Against;
  /** The gate's mean exit step per seed. */
  depthPerSeed: number[];
  /** gate − fixed exit per seed, better-oriented (> 0: the gate is better). */
  gains: number[];
  interval: Interval;
  p: number;
  /** p after Holm's correction over the judged q values of the same comparison. */
  pHolm: number;
}

/** Mean exit steps within this of R count as "always the last step". */
const AT_R = 1e-9;

/** Every judged q against each fixed exit of AGAINST, with Holm-adjusted p values per family. */
export function gateComparisons(seeds: readonly SeedGateResult[]): GateComparison[] {
  if (seeds.length === 0) throw new Error("gateComparisons: no seeds");
  const metric: Metric = seeds[0]!.metric;
  const better = (a: number, b: number) => (metric === "accuracy" ? a - b : b - a);
  const R = seeds[0]!.perStep.length;
  const qs = seeds[0]!.gated.map((g) => g.q);
  const point = (s: SeedGateResult, q: number) => {
    const g = s.gated.find((x) => x.q === q);
    if (!g) throw new Error(`gateComparisons: a seed has no gate point at q = ${q}`);
    return g;
  };
  const judged = qs.filter((q) => !seeds.every((s) => Math.abs(point(s, q).mean_step - R) <= AT_R));
  const fixed = (s: SeedGateResult, d: number, against: Against) =>
    against === "equal depth"
      ? fixedAt(s.perStep, d)
      : s.perStep[(against === "R" ? R : Math.min(R, Math.ceil(d - AT_R))) - 1]!;
  const out: GateComparison[] = [];
  for (const against of AGAINST) {
    const family = judged.map((q) => {
      const depthPerSeed = seeds.map((s) => point(s, q).mean_step);
      const gains = seeds.map((s, k) =>
        better(point(s, q).value, fixed(s, depthPerSeed[k]!, against)),
      );
      return { q, against, depthPerSeed, gains, interval: tInterval(gains), p: tTestP(gains) };
    });
    const adjusted = holmAdjust(family.map((c) => c.p));
    out.push(...family.map((c, i) => ({ ...c, pHolm: adjusted[i]! })));
  }
  return out;
}

/** A comparison read at 5 % after Holm's correction: the side its mean is on, when significant. */
export function holmReading(c: GateComparison): "holds" | "contradicted" | "inconclusive" {
  if (!(c.pHolm < 0.05)) return "inconclusive";
  return c.interval.mean > 0 ? "holds" : "contradicted";
}

/** The comparisons as a table (text or Markdown): one row per (fixed exit, q). */
export function comparisonTable(
  rows: readonly GateComparison[],
  metric: Metric,
  md: boolean,
): string {
  const pts = metric === "accuracy";
  const f = (v: number) => {
    const x = pts ? 100 * v : v;
    return `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(2)}`;
  };
  const pv = (p: number) => (Number.isNaN(p) ? "n/a" : p < 0.001 ? "< 0.001" : p.toFixed(3));
  const head = [
    "against fixed exit",
    "q",
    "gate's mean exit step",
    `gain (gate − fixed${pts ? ", points" : ", perplexity"})`,
    "95 % CI",
    "p",
    "p (Holm)",
    "at 5 % after Holm",
  ];
  const body = rows.map((c) => {
    const d = c.depthPerSeed.reduce((a, b) => a + b, 0) / c.depthPerSeed.length;
    return [
      c.against === "equal depth" ? "at equal depth (interpolated)" : `at ${c.against}`,
      String(c.q),
      d.toFixed(2),
      f(c.interval.mean),
      Number.isNaN(c.interval.lo) ? "n/a" : `[${f(c.interval.lo)}, ${f(c.interval.hi)}]`,
      pv(c.p),
      pv(c.pHolm),
      holmReading(c),
    ];
  });
  return formatTable(head, body, (i) => i > 1 && i < 7, md ? "markdown" : "text");
}
