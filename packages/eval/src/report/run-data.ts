/*
 * The run and sweep folder formats (written by @loop/train and the experiment driver), parsed
 * from their text:
 *   run.json    {"task": {name, …}, "model": {config.json}, "train": {…}, "seed", "stage"}
 *   log.jsonl   {"step", "loss", "lr", "grad_norm", "tokens_per_s", "elapsed_s"} per line, plus
 *               "eval": {"metric", "per_step": [v_1..v_R], "final"} on evaluation steps
 *   sweep.json  {"protocol": "iso-param"|"iso-flops", "task", "metric": "accuracy"|"ppl",
 *                "rows": [{"label": "N⊗R", "role": "looped"|"baseline", "run": "<relative dir>",
 *                          "params", "flops_per_token", "metric_value", "per_step": [..]}]}
 */
import type { Metric } from "../eval-file.js";
import type { TableRow } from "./table.js";

/** The parts of a run's run.json the reports read: task, model, training options, seed, stage. */
export interface RunInfo {
  task: { name?: string; [k: string]: unknown };
  model: { n_layers?: number; n_loops?: number; exit_gate?: boolean; [k: string]: unknown };
  train: Record<string, unknown>;
  seed?: number;
  stage?: string;
}

/** One line of a run's log.jsonl: the step's loss and rates, and the evaluation when one ran. */
export interface LogEntry {
  step: number;
  loss: number;
  lr?: number;
  grad_norm?: number;
  tokens_per_s?: number;
  elapsed_s?: number;
  eval?: { metric: Metric; per_step: number[]; final: number };
}

/** A comparison-table row of the sweep, with its run folder and metric per loop step. */
export interface SweepRow extends TableRow {
  role: "looped" | "baseline";
  run: string;
  per_step: number[];
}

/** The contents of sweep.json: protocol, task, metric and one row per member. */
export interface SweepFile {
  protocol: "iso-param" | "iso-flops";
  task: string;
  metric: Metric;
  rows: SweepRow[];
}

function obj(v: unknown, where: string): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new Error(`${where}: expected a JSON object, got ${JSON.stringify(v)}`);
  return v as Record<string, unknown>;
}

/** JSON.parse, its error naming `where`. */
export function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${where}: not valid JSON: ${(e as Error).message}`);
  }
}

/** Parse run.json text; errors name `where` and the bad field. */
export function parseRunInfo(text: string, where = "run.json"): RunInfo {
  const o = obj(parseJson(text, where), where);
  const task = o.task === undefined ? {} : obj(o.task, `${where} "task"`);
  const model = obj(o.model, `${where} "model"`);
  const train = o.train === undefined ? {} : obj(o.train, `${where} "train"`);
  return {
    task,
    model,
    train,
    seed: typeof o.seed === "number" ? o.seed : undefined,
    stage: typeof o.stage === "string" ? o.stage : undefined,
  };
}

/** log.jsonl lines; a line without a numeric step and loss is an error naming the line. */
export function parseLog(text: string, where = "log.jsonl"): LogEntry[] {
  const out: LogEntry[] = [];
  text.split("\n").forEach((l, i) => {
    if (l.trim() === "") return;
    const o = obj(parseJson(l, `${where}:${i + 1}`), `${where}:${i + 1}`);
    if (typeof o.step !== "number" || typeof o.loss !== "number")
      throw new Error(`${where}:${i + 1}: "step" and "loss" must be numbers`);
    out.push(o as unknown as LogEntry);
  });
  return out;
}

/** Parse sweep.json text; errors name `where` and the bad field. */
export function parseSweep(text: string, where = "sweep.json"): SweepFile {
  const o = obj(parseJson(text, where), where);
  if (o.protocol !== "iso-param" && o.protocol !== "iso-flops")
    throw new Error(
      `${where}: "protocol" must be "iso-param" or "iso-flops", got ${JSON.stringify(o.protocol)}`,
    );
  if (o.metric !== "accuracy" && o.metric !== "ppl")
    throw new Error(
      `${where}: "metric" must be "accuracy" or "ppl", got ${JSON.stringify(o.metric)}`,
    );
  if (!Array.isArray(o.rows) || o.rows.length === 0)
    throw new Error(`${where}: "rows" must be a non-empty array`);
  const rows = o.rows.map((r, i) => {
    const w = `${where} rows[${i}]`;
    const x = obj(r, w);
    for (const k of ["label", "run"])
      if (typeof x[k] !== "string") throw new Error(`${w}: "${k}" must be a string`);
    for (const k of ["params", "flops_per_token", "metric_value"])
      if (typeof x[k] !== "number") throw new Error(`${w}: "${k}" must be a number`);
    if (x.role !== "looped" && x.role !== "baseline")
      throw new Error(`${w}: "role" must be "looped" or "baseline", got ${JSON.stringify(x.role)}`);
    const per = x.per_step ?? [];
    if (!Array.isArray(per) || !per.every((v) => typeof v === "number"))
      throw new Error(`${w}: "per_step" must be an array of numbers`);
    return { ...(x as unknown as SweepRow), per_step: per as number[] };
  });
  return {
    protocol: o.protocol,
    task: typeof o.task === "string" ? o.task : String(o.task ?? ""),
    metric: o.metric,
    rows,
  };
}

/** "Accuracy" or "Perplexity". */
export function metricName(m: Metric): string {
  return m === "accuracy" ? "Accuracy" : "Perplexity";
}
