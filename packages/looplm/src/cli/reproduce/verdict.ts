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

/**
 * The member's metric, or its downstream multiple-choice accuracy (`on: "mc"`); `on` is what a
 * verdict line adds after the values (" on PIQA", or nothing).
 */
function judged(rows: readonly MemberAggregate[], ref: string, on: ClaimDef["on"]) {
  const m = findMember(rows, ref);
  if (on !== "mc") return { ...m, on: "" };
  if (!m.mc) throw new Error(`${ref} has no downstream multiple-choice score`);
  return { ...m, ...m.mc, on: ` on ${m.mc.name}` };
}

export function claimVerdict(claim: ClaimDef, rows: readonly MemberAggregate[]): Verdict {
  const tag = (ok: boolean) => (ok ? "holds" : "does not hold at this scale");
  if (claim.kind === "better") {
    const a = judged(rows, claim.a, claim.on);
    const b = judged(rows, claim.b, claim.on);
    if (a.values.length !== b.values.length)
      throw new Error(`claim "${claim.text}": ${claim.a} and ${claim.b} have different seeds`);
    const m = a.metric;
    // accuracy: higher is better; perplexity: lower is better
    const gaps = a.values.map((v, k) => (m === "accuracy" ? v - b.values[k]! : b.values[k]! - v));
    const wins = gaps.filter((g) => g >= claim.minGap).length;
    const ok = wins === gaps.length;
    const [better, worse] = m === "accuracy" ? ["higher", "lower"] : ["lower", "higher"];
    // a negative gap: "a stays within |gap| of b"
    const rule =
      claim.minGap >= 0
        ? `${amount(m, claim.minGap)} or more ${better}`
        : `at most ${amount(m, -claim.minGap)} ${worse}`;
    const line =
      `${tag(ok)}: ${a.label} ${formatMeanSd(a.stat, m)} vs ${b.label} ${formatMeanSd(b.stat, m)}${a.on}` +
      ` (${rule} in ${wins}/${gaps.length} seeds)`;
    return { text: claim.text, holds: ok, line };
  }
  const x = judged(rows, claim.member, claim.on);
  const m = x.metric;
  const inside = x.values.filter((v) =>
    claim.kind === "below" ? v < claim.threshold : v > claim.threshold,
  ).length;
  const ok = inside === x.values.length;
  const line =
    `${tag(ok)}: ${x.label} ${formatMeanSd(x.stat, m)}${x.on}, ${claim.kind} ${value(m, claim.threshold)}` +
    ` in ${inside}/${x.values.length} seeds`;
  return { text: claim.text, holds: ok, line };
}
