/*
 * One line per claim, read off a 95 % Student-t confidence interval over seeds: "holds" (the
 * interval lies wholly on the claimed side of the claim's margin), "contradicted" (wholly on the
 * other side) or "inconclusive" (it straddles the margin, or fewer than MIN_SEEDS seeds).
 * "a beats b" is judged on the paired per-seed differences a_k − b_k (the members of seed k trained
 * on the same data stream); "below/above x" on the member's per-seed values against x.
 */
import type { MemberAggregate } from "./aggregate.js";
import { findMember } from "./aggregate.js";
import {
  CONFIDENCE,
  type Interval,
  MIN_SEEDS,
  pairedDifferences,
  type Reading,
  readInterval,
  tInterval,
  type VerdictKind,
} from "./interval.js";
import { formatMeanSd, seedCount } from "./stats.js";
import type { ClaimDef, ClaimTarget } from "./study-types.js";

export interface Verdict {
  text: string;
  kind: VerdictKind;
  line: string;
  /** The interval the verdict reads: of a − b ("better") or of the member's value (thresholds). */
  interval: Interval;
  /** Its metric (accuracy intervals are shown in points / %). */
  metric: M;
  /** What the interval is of, with its unit and margin ("2⊗4 − 2⊗1 perplexity, needs < 0"). */
  judgedOn: string;
  /** "a − b" for a paired difference, else the member's label. */
  subject: string;
  /** True for a paired difference, false for a member against a threshold. */
  difference: boolean;
  /** The value the interval is read against, in the interval's own units. */
  margin: number;
}

type M = MemberAggregate["metric"];

/** A value in the metric's unit: accuracy as a percentage, perplexity as is. */
function num(m: M, v: number, signed = false): string {
  const x = m === "accuracy" ? 100 * v : v;
  const s = Math.abs(x).toFixed(2);
  if (!signed || x === 0) return x < 0 ? `−${s}` : s;
  return x < 0 ? `−${s}` : `+${s}`;
}

function unit(m: M, difference: boolean): string {
  if (m !== "accuracy") return "";
  return difference ? " points" : " %";
}

/** "95 % CI [+3.10, +8.40] points (paired t, 5 seeds)" */
export function ciText(m: M, ci: Interval, difference: boolean): string {
  const how = `${difference ? "paired t" : "t"}, ${seedCount(ci.n)}`;
  if (ci.n < 2) return `${Math.round(CONFIDENCE * 100)} % CI n/a (${how})`;
  return `${Math.round(CONFIDENCE * 100)} % CI [${num(m, ci.lo, difference)}, ${num(m, ci.hi, difference)}]${unit(m, difference)} (${how})`;
}

function negate(ci: Interval): Interval {
  return { ...ci, mean: -ci.mean, lo: -ci.hi, hi: -ci.lo };
}

function head(r: Reading): string {
  return r.reason ? `${r.kind} (${r.reason})` : r.kind;
}

/**
 * The member's metric, or its downstream score (`on: "mc"`, the multiple-choice set; `on:
 * "cloze"`, the last-word cloze); `on` is what a verdict line adds after the values.
 */
function judged(rows: readonly MemberAggregate[], ref: string, on: ClaimTarget | undefined) {
  const m = findMember(rows, ref);
  if (on === "mc" || on === "cloze") {
    const d = m[on];
    if (!d)
      throw new Error(
        `${ref} has no downstream ${on === "mc" ? "multiple-choice" : "cloze"} score`,
      );
    return { ...m, ...d, on: ` on ${d.name}` };
  }
  return { ...m, on: "" };
}

/** The fields both kinds of claim fill alike, in the order a verdict is written out. */
function verdict(
  claim: ClaimDef,
  reading: Reading,
  line: string,
  interval: Interval,
  metric: M,
  what: Pick<Verdict, "judgedOn" | "subject" | "difference" | "margin">,
): Verdict {
  return { text: claim.text, kind: reading.kind, line, interval, metric, ...what };
}

export function claimVerdict(
  claim: ClaimDef,
  rows: readonly MemberAggregate[],
  minSeeds = MIN_SEEDS,
): Verdict {
  if (claim.kind === "better") {
    const a = judged(rows, claim.a, claim.on);
    const b = judged(rows, claim.b, claim.on);
    if (a.values.length !== b.values.length)
      throw new Error(`claim "${claim.text}": ${claim.a} and ${claim.b} have different seeds`);
    const m = a.metric;
    const ci = tInterval(pairedDifferences(a.values, b.values));
    // accuracy: higher is better; perplexity: lower is better. The margin is in "better" units.
    const reading = readInterval(m === "accuracy" ? ci : negate(ci), claim.minGap, minSeeds);
    const need =
      m === "accuracy" ? `> ${num(m, claim.minGap, true)}` : `< ${num(m, -claim.minGap, true)}`;
    // the same model in two arms (an ablation against its baseline) is named with its arm
    const [la, lb] = a.label === b.label ? [claim.a, claim.b] : [a.label, b.label];
    const line =
      `${head(reading)}: ${la} ${formatMeanSd(a.stat, m)} vs ${lb} ${formatMeanSd(b.stat, m)}${a.on};` +
      ` ${la} − ${lb} = ${num(m, ci.mean, true)}${unit(m, true)}, ${ciText(m, ci, true)}; needs ${need}${unit(m, true)}`;
    const what = `${la} − ${lb}${a.on} ${m === "accuracy" ? "accuracy points" : "perplexity"}`;
    return verdict(claim, reading, line, ci, m, {
      judgedOn: `${what}, needs ${need}`,
      subject: `${la} − ${lb}${a.on}`,
      difference: true,
      margin: m === "accuracy" ? claim.minGap : -claim.minGap,
    });
  }
  if (claim.kind === "widens") return widensVerdict(claim, rows, minSeeds);
  const x = judged(rows, claim.member, claim.on);
  const m = x.metric;
  const ci = tInterval(x.values);
  // "below x" reads the negated interval against −x, as "better" reads perplexities
  const reading =
    claim.kind === "above"
      ? readInterval(ci, claim.threshold, minSeeds)
      : readInterval(negate(ci), -claim.threshold, minSeeds);
  const line =
    `${head(reading)}: ${x.label} ${formatMeanSd(x.stat, m)}${x.on}, ${ciText(m, ci, false)};` +
    ` needs ${claim.kind === "above" ? ">" : "<"} ${num(m, claim.threshold)}${unit(m, false)}`;
  const need = `${claim.kind === "above" ? ">" : "<"} ${num(m, claim.threshold)}`;
  return verdict(claim, reading, line, ci, m, {
    judgedOn: `${x.label}${x.on} ${m === "accuracy" ? "accuracy %" : "perplexity"}, needs ${need}`,
    subject: `${x.label}${x.on}`,
    difference: false,
    margin: claim.threshold,
  });
}

/**
 * "The gap a − b is wider in one setting than in another": the paired per-seed difference of
 * differences (wa − wb) − (na − nb), oriented so that > 0 means the wide gap favours a more.
 */
function widensVerdict(
  claim: Extract<ClaimDef, { kind: "widens" }>,
  rows: readonly MemberAggregate[],
  minSeeds: number,
): Verdict {
  const [wa, wb, na, nb] = [...claim.wide, ...claim.narrow].map((r) => findMember(rows, r));
  const n = wa!.values.length;
  if ([wb, na, nb].some((m) => m!.values.length !== n))
    throw new Error(`claim "${claim.text}": its members have different seeds`);
  const m = wa!.metric;
  const wide = pairedDifferences(wa!.values, wb!.values);
  const narrow = pairedDifferences(na!.values, nb!.values);
  const ci = tInterval(pairedDifferences(wide, narrow));
  const reading = readInterval(m === "accuracy" ? ci : negate(ci), claim.minGap, minSeeds);
  const need =
    m === "accuracy" ? `> ${num(m, claim.minGap, true)}` : `< ${num(m, -claim.minGap, true)}`;
  const gap = (a: MemberAggregate, b: MemberAggregate) => `(${a.label} − ${b.label})`;
  const subject = `${gap(wa!, wb!)} − ${gap(na!, nb!)}`;
  const mean = (d: number[]) => num(m, d.reduce((x, y) => x + y, 0) / d.length, true);
  const line =
    `${head(reading)}: ${gap(wa!, wb!)} = ${mean(wide)}${unit(m, true)} vs ${gap(na!, nb!)} = ${mean(narrow)}${unit(m, true)};` +
    ` difference ${num(m, ci.mean, true)}${unit(m, true)}, ${ciText(m, ci, true)}; needs ${need}${unit(m, true)}`;
  return verdict(claim, reading, line, ci, m, {
    judgedOn: `${subject} ${m === "accuracy" ? "accuracy points" : "perplexity"}, needs ${need}`,
    subject,
    difference: true,
    margin: m === "accuracy" ? claim.minGap : -claim.minGap,
  });
}
