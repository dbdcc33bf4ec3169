/*
 * eval.json, written by `looplm eval` into a run folder (or anywhere with --out):
 * {
 *   "format": "looplm-eval/1",
 *   "model": {"dir", "label": "N⊗R", "params", "flops_per_token", "config": {config.json}},
 *   "task": {"name", ...task options},
 *   "metric": "accuracy" | "ppl",
 *   "per_step": [v_1..v_R], "final": v_R,
 *   "count": examples (accuracy) or target tokens (ppl),
 *   "q": number | null                       the single threshold asked for with --q,
 *   "gated": [{"q", "mean_step", "value", "histogram": [n_1..n_R]}]   (gated models only),
 *   "exits": [{"rule", "realisable", "mean_step", "value", "histogram"}]   (with --exit only),
 *   "mc": null | {"source", "items", "per_step": [{"acc","acc_norm","acc_bytes"}], "final": {…}},
 *   "by_hops": [{"hops", "count", "per_step", "gated", "exits"?}]   (mixed-difficulty p-hop only)
 * }
 * Values are plain numbers: accuracy in [0, 1], ppl = exp(mean NLL).
 */
import type { AccuracyResult } from "./accuracy.js";
import type { McResult } from "./multiple-choice/evaluate-mc.js";
import type { PerplexityResult } from "./perplexity.js";

/** The `format` tag of an `eval.json` file written by `looplm eval`. */
export const EVAL_FORMAT = "looplm-eval/1";

/** An evaluation metric: exact-match accuracy or perplexity. */
export type Metric = "accuracy" | "ppl";

/**
 * One threshold q of an exit-gate sweep in `eval.json`: mean exit step, metric value and exit-step
 * histogram.
 */
export interface GatedPoint {
  q: number;
  mean_step: number;
  value: number;
  histogram: number[];
}

/**
 * One exit rule in `eval.json` (docs/exit-gate.md "Exit rules"): the rule as `--exit` spells it,
 * whether it is realisable (false: the oracle), mean exit step, metric value, histogram.
 */
export interface ExitPoint {
  rule: string;
  realisable: boolean;
  mean_step: number;
  value: number;
  histogram: number[];
}

/** Multiple-choice accuracies in `eval.json`: plain, length-normalised and byte-normalised. */
export interface McSummary {
  acc: number;
  acc_norm: number;
  acc_bytes: number;
}

/**
 * The contents of `eval.json` (docs/formats.md): the model, the task, the metric at every loop step
 * and the optional gate sweep and multiple-choice results.
 */
export interface EvalFile {
  format: typeof EVAL_FORMAT;
  model: {
    dir: string;
    label: string;
    params: number;
    /**
     * FLOPs per token of the evaluation's forward at the task's sequence length: the whole
     * looped forward with the LM head at every loop step, as every step is scored.
     */
    flops_per_token: number;
    config: Record<string, unknown>;
  };
  task: { name: string; [option: string]: unknown };
  metric: Metric;
  per_step: number[];
  final: number;
  count: number;
  q: number | null;
  gated: GatedPoint[];
  /** The exit rules asked for with --exit (absent without). */
  exits?: ExitPoint[];
  mc: null | { source: string; items: number; per_step: McSummary[]; final: McSummary };
  /** A task whose difficulty varies per row (p-hop with mixed hops): each p's rows apart. */
  by_hops?: HopsSection[];
}

/** The evaluation of the rows with one number of hops p (their count, metric, gate points). */
export interface HopsSection {
  hops: number;
  count: number;
  per_step: number[];
  gated: GatedPoint[];
  exits?: ExitPoint[];
}

/** The metric part of eval.json from an accuracy or perplexity result. */
export function metricSection(
  r: AccuracyResult | PerplexityResult,
): Pick<EvalFile, "metric" | "per_step" | "final" | "count" | "gated" | "exits"> {
  const per = r.metric === "accuracy" ? r.steps.map((s) => s.accuracy) : r.steps.map((s) => s.ppl);
  return {
    metric: r.metric,
    per_step: per,
    final: per[per.length - 1]!,
    count: r.metric === "accuracy" ? r.examples : r.tokens,
    gated: r.gated.map((g) => ({
      q: g.q,
      mean_step: g.meanStep,
      value: "accuracy" in g ? g.accuracy : g.ppl,
      histogram: g.histogram,
    })),
    ...(r.exits.length > 0
      ? {
          exits: r.exits.map((e) => ({
            rule: e.rule,
            realisable: e.realisable,
            mean_step: e.meanStep,
            value: "accuracy" in e ? e.accuracy : e.ppl,
            histogram: e.histogram,
          })),
        }
      : {}),
  };
}

/** The mc part of eval.json. */
export function mcSection(r: McResult, source: string): NonNullable<EvalFile["mc"]> {
  const per = r.steps.map((s) => ({ acc: s.acc, acc_norm: s.acc_norm, acc_bytes: s.acc_bytes }));
  return { source, items: r.steps[0]!.items, per_step: per, final: per[per.length - 1]! };
}

/** The record the trainer logs on eval steps: {metric, per_step, final}. */
export function evalRecord(
  r: AccuracyResult | PerplexityResult,
): Pick<EvalFile, "metric" | "per_step" | "final"> {
  const s = metricSection(r);
  return { metric: s.metric, per_step: s.per_step, final: s.final };
}

function isNumArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => typeof x === "number");
}

/** Validate parsed eval.json (errors name the field). */
export function parseEvalFile(raw: unknown, source = "eval.json"): EvalFile {
  const fail = (m: string): never => {
    throw new Error(`${source}: ${m}`);
  };
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) fail("expected a JSON object");
  const o = raw as Record<string, unknown>;
  if (o.format !== EVAL_FORMAT)
    fail(`"format" must be "${EVAL_FORMAT}", got ${JSON.stringify(o.format)}`);
  if (o.metric !== "accuracy" && o.metric !== "ppl")
    fail(`"metric" must be "accuracy" or "ppl", got ${JSON.stringify(o.metric)}`);
  if (!isNumArray(o.per_step) || o.per_step.length === 0)
    fail(`"per_step" must be a non-empty array of numbers`);
  if (typeof o.final !== "number") fail(`"final" must be a number`);
  if (!Array.isArray(o.gated)) fail(`"gated" must be an array`);
  const m = o.model as Record<string, unknown> | undefined;
  if (!m || typeof m.label !== "string" || typeof m.params !== "number")
    fail(`"model" must hold label, params, flops_per_token`);
  const t = o.task as Record<string, unknown> | undefined;
  if (!t || typeof t.name !== "string") fail(`"task.name" must be a string`);
  return o as unknown as EvalFile;
}
