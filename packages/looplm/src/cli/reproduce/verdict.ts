/**
 * One line per claim: "holds" or "does not hold at this scale", with the numbers it rests on.
 * A claim must hold in every seed (paired by seed), so a lucky seed cannot carry it.
 */
import type { MemberAggregate } from "./aggregate.js";
import { findMember } from "./aggregate.js";
import { formatMeanSd } from "./stats.js";
import type { ClaimDef } from "./study-types.js";

export interface Verdict {
  text: string;
  holds: boolean;
  line: string;
}

function amount(metric: MemberAggregate["metric"], v: number): string {
  return metric === "accuracy" ? `${(100 * v).toFixed(2)} points` : v.toFixed(2);
}

function value(metric: MemberAggregate["metric"], v: number): string {
  return metric === "accuracy" ? `${(100 * v).toFixed(2)} %` : v.toFixed(2);
}

export function claimVerdict(claim: ClaimDef, rows: readonly MemberAggregate[]): Verdict {
  const tag = (ok: boolean) => (ok ? "holds" : "does not hold at this scale");
  if (claim.kind === "better") {
    const a = findMember(rows, claim.a);
    const b = findMember(rows, claim.b);
    if (a.values.length !== b.values.length)
      throw new Error(`claim "${claim.text}": ${claim.a} and ${claim.b} have different seeds`);
    const m = a.metric;
    // accuracy: higher is better; perplexity: lower is better
    const gaps = a.values.map((v, k) => (m === "accuracy" ? v - b.values[k]! : b.values[k]! - v));
    const wins = gaps.filter((g) => g >= claim.minGap).length;
    const ok = wins === gaps.length;
    const word = m === "accuracy" ? "higher" : "lower";
    const line =
      `${tag(ok)}: ${a.label} ${formatMeanSd(a.stat, m)} vs ${b.label} ${formatMeanSd(b.stat, m)}` +
      ` (${amount(m, claim.minGap)} or more ${word} in ${wins}/${gaps.length} seeds)`;
    return { text: claim.text, holds: ok, line };
  }
  const x = findMember(rows, claim.member);
  const m = x.metric;
  const inside = x.values.filter((v) =>
    claim.kind === "below" ? v < claim.threshold : v > claim.threshold,
  ).length;
  const ok = inside === x.values.length;
  const line =
    `${tag(ok)}: ${x.label} ${formatMeanSd(x.stat, m)}, ${claim.kind} ${value(m, claim.threshold)}` +
    ` in ${inside}/${x.values.length} seeds`;
  return { text: claim.text, holds: ok, line };
}
