/*
 * report.html for one run folder: facts (task, model, params, FLOPs/token, stage), the loss
 * curve from log.jsonl, the eval metric during training, the metric by loop step (eval.json and
 * the last training eval), and for a gated model the exit-step histogram and the depth/metric
 * frontier over q; multiple-choice results when eval.json has them.
 */
import { join } from "node:path";
import { countParameters, flopsPerToken, parseConfig } from "@loop/looped";
import { writeFileAtomic } from "@loop/tensor/node";
import type { EvalFile, Metric } from "../eval-file.js";
import {
  evalHistoryChart,
  exitHistogramChart,
  frontierChart,
  lossChart,
  mcStepChart,
  stepMetricChart,
} from "../report/charts.js";
import { metricName } from "../report/run-data.js";
import { formatMetric } from "../report/table.js";
import { htmlPage, type Section } from "./html-page.js";
import { type RunFolder, readRunFolder } from "./read-folders.js";

function modelFacts(run: RunFolder): [string, string][] {
  const m = run.info.model;
  const rows: [string, string][] = [];
  rows.push(["model", `${m.n_layers ?? "?"}⊗${m.n_loops ?? 1} ${String(m.backbone ?? "")}`.trim()]);
  for (const k of ["d_model", "vocab_size", "loop_norm", "exit_gate"])
    if (m[k] !== undefined) rows.push([k, String(m[k])]);
  try {
    const cfg = parseConfig(m);
    const T = typeof run.info.task.seqLen === "number" ? run.info.task.seqLen : undefined;
    rows.push(["parameters", countParameters(cfg).toLocaleString("en-US")]);
    rows.push([
      "forward FLOPs/token (logits of step R)",
      flopsPerToken(cfg, { seqLen: T }).forwardPerToken.toLocaleString("en-US"),
    ]);
  } catch (e) {
    rows.push(["parameters", `unavailable (${(e as Error).message})`]);
  }
  return rows;
}

/** Which q's histogram to draw: the --q of the eval, else q = 0.5 or the middle of the sweep. */
function histogramQ(ev: EvalFile): number {
  if (ev.q !== null && ev.gated.some((g) => g.q === ev.q)) return ev.q;
  const half = ev.gated.find((g) => g.q === 0.5);
  return half ? half.q : ev.gated[Math.floor(ev.gated.length / 2)]!.q;
}

/**
 * The task as run.json records it, but with the vocabulary the model has: run.json's `vocab` of
 * a language-modelling task is the BPE size asked for (--vocab), which a character vocabulary or
 * a given tokenizer.json does not follow.
 */
function taskText(info: RunFolder["info"]): string {
  const task = { ...info.task };
  if (task.name === "lm" && task.tokenizer !== "bpe" && "vocab" in task) {
    if (typeof info.model.vocab_size === "number") task.vocab = info.model.vocab_size;
    else delete task.vocab;
  }
  return JSON.stringify(task);
}

/**
 * The report sections of one run: facts, loss curve, per-step accuracy and evaluation tables;
 * `label` prefixes chart ids.
 */
export function runSections(run: RunFolder, label = ""): Section[] {
  const s: Section[] = [];
  const id = (x: string) => (label ? `${label}-${x}` : x);
  const { info, log, eval: ev } = run;
  const last = log[log.length - 1];
  s.push({
    kind: "facts",
    title: "Run",
    rows: [
      ["folder", run.dir],
      ["task", taskText(info)],
      ...modelFacts(run),
      ["stage", info.stage ?? "?"],
      ["seed", String(info.seed ?? "?")],
      ["steps logged", String(log.length)],
      ["last loss", last ? last.loss.toFixed(4) : "—"],
    ],
  });
  if (log.length > 0)
    s.push({
      kind: "chart",
      id: id("loss"),
      spec: lossChart(log.map((e) => ({ run: label || "run", step: e.step, loss: e.loss }))),
    });
  else s.push({ kind: "note", text: "log.jsonl is missing or empty: no loss curve." });
  const evals = log.filter((e) => e.eval);
  let metric: Metric | null = ev?.metric ?? evals[0]?.eval?.metric ?? null;
  if (evals.length > 0 && metric) {
    s.push({
      kind: "chart",
      id: id("eval-history"),
      spec: evalHistoryChart(
        evals.map((e) => ({ step: e.step, value: e.eval!.final, series: "final step" })),
        metric,
      ),
    });
  }
  const perStep: { series: string; step: number; value: number }[] = [];
  const lastEval = evals[evals.length - 1]?.eval;
  const training = lastEval && lastEval.metric === metric ? lastEval.per_step : null;
  // The same numbers twice would draw one line exactly over the other: one series says both.
  const same =
    ev !== null &&
    ev !== undefined &&
    training !== null &&
    training.length === ev.per_step.length &&
    training.every((v, r) => v === ev.per_step[r]);
  if (ev)
    ev.per_step.forEach((v, r) => {
      const series = same ? "eval.json = last training eval" : "eval.json";
      perStep.push({ series, step: r + 1, value: v });
    });
  if (training && !same)
    training.forEach((v, r) => {
      perStep.push({ series: "last training eval", step: r + 1, value: v });
    });
  if (perStep.length > 0 && metric) {
    s.push({ kind: "chart", id: id("per-step"), spec: stepMetricChart(perStep, metric) });
    const src = ev ? ev.per_step : lastEval!.per_step;
    s.push({
      kind: "table",
      title: `${metricName(metric)} by loop step`,
      head: ["step", metricName(metric)],
      rows: src.map((v, r) => [String(r + 1), formatMetric(metric!, v)]),
    });
  } else {
    metric = null;
    s.push({
      kind: "note",
      text: "No evaluation yet (no eval.json, no eval entries in log.jsonl).",
    });
  }
  if (ev && ev.gated.length > 0) {
    const q = histogramQ(ev);
    s.push({
      kind: "chart",
      id: id("exit-histogram"),
      spec: exitHistogramChart(ev.gated.find((g) => g.q === q)!.histogram, q),
    });
    s.push({ kind: "chart", id: id("frontier"), spec: frontierChart(ev.gated, ev.metric) });
    s.push({
      kind: "table",
      title: "Threshold exit",
      head: ["q", "mean exit step", metricName(ev.metric)],
      rows: ev.gated.map((g) => [
        String(g.q),
        g.mean_step.toFixed(3),
        formatMetric(ev.metric, g.value),
      ]),
    });
  }
  if (ev?.mc) {
    s.push({ kind: "chart", id: id("mc"), spec: mcStepChart(ev.mc.per_step, ev.mc.source) });
    s.push({
      kind: "table",
      title: `Multiple choice (${ev.mc.source}, ${ev.mc.items} items)`,
      head: ["step", "acc", "acc_norm", "acc_bytes"],
      rows: ev.mc.per_step.map((m, r) => [
        String(r + 1),
        formatMetric("accuracy", m.acc),
        formatMetric("accuracy", m.acc_norm),
        formatMetric("accuracy", m.acc_bytes),
      ]),
    });
  }
  return s;
}

/** Write `<runDir>/report.html` (atomically) and return its path. */
export async function renderRunReport(runDir: string): Promise<string> {
  const run = readRunFolder(runDir);
  const name = String(run.info.task.name ?? "run");
  const html = await htmlPage(`looplm run: ${name}`, runSections(run));
  const out = join(runDir, "report.html");
  writeFileAtomic(out, html);
  return out;
}
