/*
 * report.html for a sweep folder: the comparison table (params, FLOPs/token, metric), the metric
 * against parameters and against FLOPs/token (one point per member, labelled N⊗R), the metric by
 * loop step of every member, all members' loss curves, and for gated members with an eval.json
 * their depth/metric frontiers and exit-step histograms.
 */
import { join } from "node:path";
import { writeFileAtomic } from "@loop/tensor/node";
import type { GatedPoint } from "../eval-file.js";
import {
  exitHistogramChart,
  frontierChart,
  lossChart,
  stepMetricChart,
  sweepChart,
} from "../report/charts.js";
import { metricName } from "../report/run-data.js";
import { comparisonCells, comparisonHead, comparisonTable } from "../report/table.js";
import { htmlPage, type Section } from "./html-page.js";
import { readSweepFolder } from "./read-folders.js";

/** Write `<sweepDir>/report.html` (atomically) and return its path. */
export async function renderSweepReport(sweepDir: string): Promise<string> {
  const { sweep, runs } = readSweepFolder(sweepDir);
  const m = sweep.metric;
  const s: Section[] = [
    {
      kind: "facts",
      title: "Sweep",
      rows: [
        ["folder", sweepDir],
        ["protocol", sweep.protocol],
        ["task", sweep.task],
        ["metric", metricName(m)],
        ["members", String(sweep.rows.length)],
      ],
    },
    { kind: "text", title: "Comparison", text: comparisonTable(sweep.rows, m, "text") },
    { kind: "chart", id: "vs-params", spec: sweepChart(sweep.rows, m, "params") },
    { kind: "chart", id: "vs-flops", spec: sweepChart(sweep.rows, m, "flops_per_token") },
  ];
  const perStep = sweep.rows.flatMap((r) =>
    r.per_step.map((v, i) => ({ series: r.label, step: i + 1, value: v })),
  );
  if (perStep.length > 0)
    s.push({ kind: "chart", id: "per-step", spec: stepMetricChart(perStep, m) });
  const loss = sweep.rows.flatMap((r) =>
    (runs.get(r.label)?.log ?? []).map((e) => ({ run: r.label, step: e.step, loss: e.loss })),
  );
  if (loss.length > 0) s.push({ kind: "chart", id: "loss", spec: lossChart(loss) });
  else s.push({ kind: "note", text: "No member run folder with a log.jsonl: no loss curves." });
  const frontier: (GatedPoint & { series: string })[] = [];
  for (const r of sweep.rows) {
    const ev = runs.get(r.label)?.eval;
    if (!ev || ev.gated.length === 0) continue;
    for (const g of ev.gated) frontier.push({ ...g, series: r.label });
  }
  if (frontier.length > 0) {
    s.push({ kind: "chart", id: "frontier", spec: frontierChart(frontier, m) });
    sweep.rows.forEach((r, i) => {
      const ev = runs.get(r.label)?.eval;
      if (!ev || ev.gated.length === 0) return;
      const g =
        ev.gated.find((x) => x.q === (ev.q ?? 0.5)) ?? ev.gated[Math.floor(ev.gated.length / 2)]!;
      const spec = exitHistogramChart(g.histogram, g.q);
      spec.title = `Exit-step histogram ${r.label} (q = ${g.q})`;
      s.push({ kind: "chart", id: `exit-histogram-${i}`, spec });
    });
  }
  s.push({
    kind: "table",
    title: "Members",
    head: [...comparisonHead(m), "run"],
    rows: sweep.rows.map((r) => [...comparisonCells(r, m), r.run]),
  });
  const html = await htmlPage(`looplm sweep: ${sweep.task} (${sweep.protocol})`, s);
  const out = join(sweepDir, "report.html");
  writeFileAtomic(out, html);
  return out;
}
