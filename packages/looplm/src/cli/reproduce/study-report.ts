/*
 * What a finished study leaves in its folder: results.json (every number), results.md (the
 * table, the verdicts, how it ran), report.html, and its plots as SVG files beside them.
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import {
  type ChartSpec,
  formatTable,
  frontierChart,
  type Metric,
  seedSpreadChart,
  stepMetricChart,
} from "@loop/eval";
import { htmlPage, renderChartSvg, type Section } from "@loop/eval/node";
import { writeFileAtomic } from "@loop/tensor/node";
import { writeJsonFile } from "@loop/train/node";
import type { MemberAggregate } from "./aggregate.js";
import type { FrontierRow } from "./gate-frontier.js";
import { perLengthTable, resultsTable, verdictTable } from "./results-table.js";
import { type SeedMachine, seedMachineLines } from "./seed-machine.js";
import { formatMeanSd } from "./stats.js";
import type { ArmDef } from "./study-types.js";
import type { Verdict } from "./verdict.js";

export interface RunFacts {
  study: string;
  title: string;
  notes: string;
  scale: string;
  seeds: number;
  command: string;
  wallSeconds: number;
  /** os.loadavg() at the start and at the end (1, 5, 15 minutes). */
  loadStart: number[];
  loadEnd: number[];
}

export function loadNow(): number[] {
  return loadavg().map((v) => Math.round(v * 100) / 100);
}

function factRows(f: RunFacts): [string, string][] {
  return [
    ["command", f.command],
    ["scale", f.scale],
    ["seeds", String(f.seeds)],
    ["wall-clock", `${(f.wallSeconds / 60).toFixed(1)} min`],
    ["load average at start (1/5/15 min)", f.loadStart.join(" / ")],
    ["load average at end (1/5/15 min)", f.loadEnd.join(" / ")],
  ];
}

const SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";

/**
 * The plot of a study's claims: for every paired-difference claim, the mean difference a − b over
 * seeds with its 95 % t-interval, and a tick at the margin the claim must clear. One chart per
 * metric (accuracy in points, perplexity as is), since their scales differ.
 */
export function claimChart(verdicts: readonly Verdict[], metric: Metric): ChartSpec | null {
  const scale = metric === "accuracy" ? 100 : 1;
  const values = verdicts
    .filter((v) => v.difference && v.metric === metric && v.interval.n >= 2)
    .map((v, i) => ({
      claim: `${i + 1}. ${v.subject}`,
      mean: scale * v.interval.mean,
      lo: scale * v.interval.lo,
      hi: scale * v.interval.hi,
      margin: scale * v.margin,
      verdict: v.kind,
    }));
  if (values.length === 0) return null;
  const unit = metric === "accuracy" ? "accuracy difference a − b (points)" : "perplexity a − b";
  const x = {
    field: "claim",
    type: "nominal" as const,
    title: "claim",
    sort: values.map((v) => v.claim),
    axis: { labelAngle: 0 },
  };
  const y = { type: "quantitative" as const, title: unit, scale: { zero: true } };
  return {
    $schema: SCHEMA,
    title: `Claims: paired difference, mean and 95 % CI over seeds (${metric === "ppl" ? "perplexity" : "accuracy"})`,
    width: 480,
    height: 280,
    data: { values },
    layer: [
      { mark: { type: "rule" }, encoding: { x, y: { ...y, field: "lo" }, y2: { field: "hi" } } },
      {
        mark: { type: "point", filled: true, size: 80 },
        encoding: {
          x,
          y: { ...y, field: "mean" },
          color: { field: "verdict", type: "nominal", title: "verdict" },
        },
      },
      {
        mark: { type: "tick", color: "gray", thickness: 2 },
        encoding: { x, y: { ...y, field: "margin" } },
      },
    ],
  } as ChartSpec;
}

/** "1⊗4" → [1, 4]. */
function nr(label: string): [number, number] {
  const [n, r] = label.split("⊗").map(Number);
  return [n!, r!];
}

/**
 * A depth sweep's plot: the metric (mean ± sd over seeds) against R for the looped 1⊗R, the deep
 * R⊗1 and the shallow 1⊗1 of each arm (an arm's R is its largest N·R).
 */
export function depthChart(rows: readonly MemberAggregate[]): ChartSpec {
  const metric: Metric = rows[0]!.metric;
  const scale = metric === "accuracy" ? 100 : 1;
  const armR = new Map<string, number>();
  for (const r of rows) {
    const [n, l] = nr(r.label);
    armR.set(r.arm, Math.max(armR.get(r.arm) ?? 1, n * l));
  }
  const values = rows.map((r) => {
    const [n, l] = nr(r.label);
    const model = n === 1 && l === 1 ? "shallow 1⊗1" : n === 1 ? "looped 1⊗R" : "deep R⊗1";
    const { mean, sd } = r.stat;
    return {
      R: armR.get(r.arm)!,
      model,
      mean: scale * mean,
      lo: scale * (mean - sd),
      hi: scale * (mean + sd),
    };
  });
  const x = {
    field: "R",
    type: "quantitative" as const,
    title: "depth R (loop steps or layers; p = R hops)",
    scale: { type: "log" as const, base: 2 },
    axis: { values: [...new Set(values.map((v) => v.R))] },
  };
  const title = metric === "accuracy" ? "accuracy (%)" : "perplexity";
  const y = {
    type: "quantitative" as const,
    title,
    ...(metric === "accuracy" ? { scale: { domain: [0, 100] } } : {}),
  };
  const color = { field: "model", type: "nominal" as const, title: "model" };
  return {
    $schema: SCHEMA,
    title: `${title} against depth R, mean ± sd over seeds`,
    width: 420,
    height: 260,
    data: { values },
    layer: [
      {
        mark: { type: "rule" },
        encoding: { x, y: { ...y, field: "lo" }, y2: { field: "hi" }, color },
      },
      { mark: { type: "line", point: true }, encoding: { x, y: { ...y, field: "mean" }, color } },
    ],
  } as ChartSpec;
}

/**
 * Plots: name (SVG file stem) → Vega-Lite spec (the claims' intervals when `verdicts` given;
 * the metric against depth R for a depth sweep).
 */
export function sweepStudyCharts(
  rows: readonly MemberAggregate[],
  verdicts: readonly Verdict[] = [],
  depth = false,
): Map<string, ChartSpec> {
  const metric: Metric = rows[0]!.metric;
  const charts = new Map<string, ChartSpec>();
  charts.set(
    "metric",
    seedSpreadChart(
      rows.map((r) => ({ model: `${r.arm}/${r.label}`, mean: r.stat.mean, sd: r.stat.sd })),
      metric,
    ),
  );
  const steps = rows
    .filter((r) => r.perStep.length > 1)
    .flatMap((r) =>
      r.perStep.map((s, i) => ({ series: `${r.arm}/${r.label}`, step: i + 1, value: s.mean })),
    );
  if (steps.length > 0) charts.set("per-step", stepMetricChart(steps, metric));
  if (depth) charts.set("by-depth", depthChart(rows));
  for (const m of ["ppl", "accuracy"] as const) {
    const c = claimChart(verdicts, m);
    if (c) charts.set(`claims-${m}`, c);
  }
  return charts;
}

export function gateStudyCharts(rows: readonly FrontierRow[], metric: Metric) {
  const points = rows.map((r) => ({
    q: r.q ?? 0,
    mean_step: r.depth.mean,
    value: r.value.mean,
    histogram: [],
    series: r.kind === "gate" ? "exit gate (q sweep)" : "fixed exit at step r",
  }));
  return new Map<string, ChartSpec>([["frontier", frontierChart(points, metric)]]);
}

export function frontierTable(rows: readonly FrontierRow[], metric: Metric, md: boolean): string {
  const head = [
    "exit",
    "mean exit step (mean ± sd)",
    `${metric === "ppl" ? "perplexity" : "accuracy"} (mean ± sd)`,
    "per seed (exit step: value)",
  ];
  const v = (x: number) => (metric === "ppl" ? x.toFixed(2) : `${(100 * x).toFixed(1)} %`);
  const body = rows.map((r) => [
    r.label,
    `${r.depth.mean.toFixed(2)} ± ${r.depth.sd.toFixed(2)}`,
    formatMeanSd(r.value, metric),
    r.depthPerSeed.map((d, k) => `${d.toFixed(2)}: ${v(r.valuePerSeed[k]!)}`).join(", "),
  ]);
  return formatTable(head, body, (i) => i > 0, md ? "markdown" : "text");
}

export interface StudyOutput {
  facts: RunFacts;
  /** The text table printed to the terminal and its Markdown twin. */
  table: { text: string; markdown: string };
  verdicts: { text: string; line: string }[];
  /** The accuracy per Mano expression length, when an arm has it. */
  perLength?: { text: string; markdown: string };
  /** Further tables with their titles (a gate study's comparisons and by-difficulty tables). */
  extra?: { title: string; text: string; markdown: string }[];
  /** The claims as a table (verdict, interval), when the study has one. */
  claims?: { text: string; markdown: string };
  charts: Map<string, ChartSpec>;
  data: unknown;
  commands: string[];
  /** Where each seed was trained, when the study keeps seed records. */
  seedMachines?: (SeedMachine | undefined)[];
}

export function sweepStudyTables(rows: readonly MemberAggregate[], arms: readonly ArmDef[]) {
  return { text: resultsTable(rows, arms, "text"), markdown: resultsTable(rows, arms, "markdown") };
}

/** The per-length table (text and Markdown), when an arm of the study has that evaluation. */
export function perLengthTables(rows: readonly MemberAggregate[], arms: readonly ArmDef[]) {
  const text = perLengthTable(rows, arms, "text");
  const markdown = perLengthTable(rows, arms, "markdown");
  return text && markdown ? { text, markdown } : undefined;
}

export function claimTables(verdicts: readonly Verdict[]) {
  return { text: verdictTable(verdicts, "text"), markdown: verdictTable(verdicts, "markdown") };
}

/** Each verdict's claim, then its line indented (the terminal's and report.html's "Claims"). */
export function verdictLines(verdicts: readonly { text: string; line: string }[]): string {
  return verdicts.map((v) => `${v.text}\n  ${v.line}`).join("\n");
}

/** Write results.json, results.md, report.html and <study>-<chart>.svg into `dir`. */
export async function writeStudyOutput(dir: string, o: StudyOutput): Promise<string[]> {
  const f = o.facts;
  const svgs: string[] = [];
  for (const [name, spec] of o.charts) {
    const file = `${f.study}-${name}.svg`;
    writeFileAtomic(join(dir, file), await renderChartSvg(spec));
    svgs.push(file);
  }
  writeJsonFile(join(dir, "results.json"), {
    study: f.study,
    scale: f.scale,
    seeds: f.seeds,
    command: f.command,
    wall_seconds: f.wallSeconds,
    load_start: f.loadStart,
    load_end: f.loadEnd,
    ...(o.seedMachines ? { seed_machines: o.seedMachines.map((m) => m ?? null) } : {}),
    verdicts: o.verdicts,
    results: o.data,
  });
  const md = [
    `## ${f.title}`,
    "",
    f.notes,
    "",
    "```sh",
    f.command,
    "```",
    "",
    `Wall-clock ${(f.wallSeconds / 60).toFixed(1)} min; load average (1/5/15 min) ${f.loadStart.join(" / ")} at the start, ${f.loadEnd.join(" / ")} at the end.`,
    "",
    ...(o.seedMachines ? [...seedMachineLines(o.seedMachines).map((l) => `- ${l}`), ""] : []),
    o.table.markdown,
    "",
    ...(o.perLength ? [o.perLength.markdown, ""] : []),
    ...(o.extra ?? []).flatMap((e) => [`${e.title}:`, "", e.markdown, ""]),
    ...(o.claims ? [o.claims.markdown, ""] : []),
    ...o.verdicts.map((v) => `- ${v.text}: **${v.line}**`),
    "",
    ...svgs.map((s) => `![${s}](${s})`),
    "",
    "Each member of each seed is an ordinary run folder; the same training, one seed at a time:",
    "",
    "```sh",
    ...o.commands,
    "```",
    "",
  ].join("\n");
  writeFileAtomic(join(dir, "results.md"), md);
  const sections: Section[] = [
    { kind: "facts", title: "Run", rows: factRows(f) },
    ...(o.seedMachines
      ? [
          {
            kind: "text" as const,
            title: "Seeds",
            text: seedMachineLines(o.seedMachines).join("\n"),
          },
        ]
      : []),
    { kind: "text", title: "Results", text: o.table.text },
    ...(o.perLength
      ? [{ kind: "text" as const, title: "Accuracy per expression length", text: o.perLength.text }]
      : []),
    ...(o.extra ?? []).map((e) => ({ kind: "text" as const, title: e.title, text: e.text })),
    ...(o.claims
      ? [{ kind: "text" as const, title: "Claims (95 % CIs)", text: o.claims.text }]
      : []),
    { kind: "text", title: "Claims", text: verdictLines(o.verdicts) },
    ...[...o.charts].map(([id, spec]) => ({ kind: "chart" as const, id, spec })),
  ];
  writeFileAtomic(
    join(dir, "report.html"),
    await htmlPage(`looplm reproduce ${f.study}`, sections),
  );
  return ["results.json", "results.md", "report.html", ...svgs].map((x) => join(dir, x));
}
