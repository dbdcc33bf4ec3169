/*
 * The results table of a study: every member's metric as mean ± sd over seeds, its per-loop-step
 * means, and the paper's number beside it; as aligned text (the terminal) or Markdown
 * (docs/results.md).
 */
import { formatTable } from "@loop/eval";
import type { MemberAggregate } from "./aggregate.js";
import { formatMeanSd, seedCount } from "./stats.js";
import type { ArmDef } from "./study-types.js";
import type { Verdict } from "./verdict.js";

function perStepCell(m: Pick<MemberAggregate, "perStep" | "metric">): string {
  if (m.perStep.length <= 1) return "–";
  return m.perStep
    .map((s) => (m.metric === "accuracy" ? (100 * s.mean).toFixed(1) : s.mean.toFixed(1)))
    .join(" → ");
}

export function resultsTable(
  rows: readonly MemberAggregate[],
  arms: readonly ArmDef[],
  format: "text" | "markdown",
): string {
  const seeds = rows[0]?.values.length ?? 0;
  const metricName = rows[0]?.metric === "ppl" ? "val. perplexity" : "accuracy";
  const head = [
    "arm",
    "model",
    "role",
    "params",
    "FLOPs/token",
    `${metricName} (mean ± sd, ${seedCount(seeds)})`,
    "per loop step (mean)",
    "paper",
  ];
  // arms with a downstream evaluation add its accuracy (and per step)
  const downstream = [
    { key: "mc" as const, name: arms.find((a) => a.mc)?.mc?.name },
    { key: "cloze" as const, name: rows.find((r) => r.cloze)?.cloze?.name },
  ].filter((d) => d.name);
  for (const { name } of downstream) head.push(`${name} acc (mean ± sd)`, `${name} per loop step`);
  const body = rows.map((r) => [
    r.arm,
    r.label,
    r.role,
    r.params.toLocaleString("en-US"),
    r.flops_per_token.toLocaleString("en-US"),
    formatMeanSd(r.stat, r.metric),
    perStepCell(r),
    arms.find((a) => a.id === r.arm)?.paper[r.label] ?? "–",
    ...downstream.flatMap(({ key }) => {
      const d = r[key];
      return d ? [formatMeanSd(d.stat, "accuracy"), perStepCell(d)] : ["–", "–"];
    }),
  ]);
  return formatTable(head, body, (i) => i >= 3 && i <= 5, format);
}

/**
 * The accuracy of every member at each expression length ℓ = 1..L (mean ± sd over seeds, last
 * loop step), with a caption line saying what was scored; undefined when no arm has it.
 */
export function perLengthTable(
  rows: readonly MemberAggregate[],
  arms: readonly ArmDef[],
  format: "text" | "markdown",
): string | undefined {
  const scored = rows.filter((r) => r.perLength);
  if (scored.length === 0) return undefined;
  const L = Math.max(...scored.map((r) => r.perLength!.length));
  const seeds = scored[0]!.perLength![0]!.values.length;
  const counts = [...new Set(arms.filter((a) => a.perLength).map((a) => a.perLength!.count))];
  const head = [
    "arm",
    "model",
    ...Array.from({ length: L }, (_, i) => `ℓ = ${i + 1} (mean ± sd, ${seedCount(seeds)})`),
  ];
  const body = scored.map((r) => [
    r.arm,
    r.label,
    ...Array.from({ length: L }, (_, i) => {
      const at = r.perLength![i];
      return at ? formatMeanSd(at.stat, "accuracy") : "–";
    }),
  ]);
  const caption = `Accuracy per expression length ℓ (last loop step; ${counts.join(", ")} fresh expressions per ℓ, as \`looplm eval --per-length\` scores them):`;
  return `${caption}\n\n${formatTable(head, body, (i) => i >= 2, format)}`;
}

/**
 * The claims: each one's verdict and the interval it rests on (the paired difference a − b, or
 * the member's mean against a threshold).
 */
export function verdictTable(verdicts: readonly Verdict[], format: "text" | "markdown"): string {
  const head = ["claim", "verdict", "judged on", "mean", "95 % CI", "seeds"];
  const body = verdicts.map((v) => {
    const pct = v.metric === "accuracy";
    const f = (x: number) =>
      Number.isNaN(x) ? "n/a" : pct ? `${(100 * x).toFixed(2)}` : x.toFixed(2);
    return [
      v.text,
      v.kind,
      v.judgedOn,
      f(v.interval.mean),
      Number.isNaN(v.interval.lo) ? "n/a" : `[${f(v.interval.lo)}, ${f(v.interval.hi)}]`,
      String(v.interval.n),
    ];
  });
  return formatTable(head, body, (i) => i >= 3, format);
}
