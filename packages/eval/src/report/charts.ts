/*
 * Vega-Lite specifications of every report plot (pure data; rendered to SVG by
 * `renderChartSvg` in the node entry, or by vega-embed in a browser). Each chart has a title,
 * which is also how a report's reader (and its tests) find it.
 */
import type { TopLevelSpec } from "vega-lite";
import type { GatedPoint, Metric } from "../eval-file.js";
import { metricName } from "./run-data.js";
import type { TableRow } from "./table.js";

/**
 * A Vega-Lite specification as plain JSON. Typed here rather than as vega-lite's `TopLevelSpec`
 * so that this entry's types do not need the optional vega-lite package installed; every chart
 * below is checked against `TopLevelSpec` where it is built.
 */
export interface ChartSpec {
  $schema: string;
  title: string;
  [key: string]: unknown;
}

const SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";
const SIZE = { width: 420, height: 260 } as const;

function yScale(metric: Metric) {
  return metric === "ppl" ? { type: "log" as const } : { domain: [0, 1] };
}

function yAxis(metric: Metric) {
  return metric === "accuracy" ? { format: ".0%" } : {};
}

/** The y encoding of a metric held in `field`: log scale for perplexity, 0–100 % for accuracy. */
function metricY(field: string, metric: Metric) {
  return {
    field,
    type: "quantitative" as const,
    title: metricName(metric),
    scale: yScale(metric),
    axis: yAxis(metric),
  };
}

/** Training loss against optimizer step, one line per run. */
export function lossChart(
  points: readonly { run: string; step: number; loss: number }[],
): ChartSpec {
  const positive = points.every((p) => p.loss > 0);
  return {
    $schema: SCHEMA,
    title: "Training loss",
    ...SIZE,
    data: { values: points.map((p) => ({ ...p })) },
    mark: { type: "line", strokeWidth: 1.5 },
    encoding: {
      x: { field: "step", type: "quantitative", title: "step" },
      y: {
        field: "loss",
        type: "quantitative",
        title: "loss (nats/token)",
        scale: positive ? { type: "log" } : { zero: false },
      },
      color: { field: "run", type: "nominal", title: "run" },
    },
  } satisfies TopLevelSpec;
}

/** The metric at every loop step r (one line per series: a model, or "final"/"gated"). */
export function stepMetricChart(
  points: readonly { series: string; step: number; value: number }[],
  metric: Metric,
  title = `${metricName(metric)} by loop step`,
): ChartSpec {
  const x = {
    field: "step",
    type: "ordinal",
    title: "loop step r",
    axis: { labelAngle: 0 },
  } as const;
  return seriesChart(title, x, points, metric);
}

/** The eval metric of step R at each evaluation during training. */
export function evalHistoryChart(
  points: readonly { step: number; value: number; series: string }[],
  metric: Metric,
): ChartSpec {
  const x = { field: "step", type: "quantitative", title: "training step" } as const;
  return seriesChart(`${metricName(metric)} during training`, x, points, metric);
}

/** One line with points per series of `value` against the step, on the metric's y axis. */
function seriesChart(
  title: string,
  x: {
    field: "step";
    type: "ordinal" | "quantitative";
    title: string;
    axis?: { labelAngle: number };
  },
  points: readonly { series: string; step: number; value: number }[],
  metric: Metric,
): ChartSpec {
  return {
    $schema: SCHEMA,
    title,
    ...SIZE,
    data: { values: points.map((p) => ({ ...p })) },
    mark: { type: "line", point: true },
    encoding: {
      x,
      y: metricY("value", metric),
      color: { field: "series", type: "nominal", title: "" },
    },
  } satisfies TopLevelSpec;
}

/** Sweep members' metric against parameters or forward FLOPs/token, labelled N⊗R. */
export function sweepChart(
  rows: readonly TableRow[],
  metric: Metric,
  x: "params" | "flops_per_token",
): ChartSpec {
  const xTitle = x === "params" ? "parameters" : "forward FLOPs per token";
  const title = `${metricName(metric)} vs ${x === "params" ? "parameters" : "FLOPs per token"}`;
  const enc = {
    x: {
      field: x,
      type: "quantitative" as const,
      title: xTitle,
      scale: { zero: false },
      axis: { format: "~s" },
    },
    y: metricY("metric_value", metric),
  };
  return {
    $schema: SCHEMA,
    title,
    ...SIZE,
    data: { values: rows.map((r) => ({ ...r })) },
    layer: [
      {
        mark: { type: "point", filled: true, size: 80 },
        encoding: {
          ...enc,
          color: { field: "role", type: "nominal", title: "role" },
          shape: { field: "role", type: "nominal" },
        },
      },
      {
        mark: { type: "text", dy: -10, fontSize: 11 },
        encoding: { ...enc, text: { field: "label", type: "nominal" } },
      },
    ],
  } satisfies TopLevelSpec;
}

/** Share of scored tokens exiting at each loop step for threshold q. */
export function exitHistogramChart(histogram: readonly number[], q: number): ChartSpec {
  const total = histogram.reduce((a, b) => a + b, 0);
  return {
    $schema: SCHEMA,
    title: `Exit-step histogram (q = ${q})`,
    ...SIZE,
    data: {
      values: histogram.map((c, r) => ({
        step: r + 1,
        count: c,
        share: total === 0 ? 0 : c / total,
      })),
    },
    mark: { type: "bar" },
    encoding: {
      x: { field: "step", type: "ordinal", title: "exit step", axis: { labelAngle: 0 } },
      y: {
        field: "share",
        type: "quantitative",
        title: "share of tokens",
        axis: { format: ".0%" },
      },
      tooltip: [{ field: "count", type: "quantitative" }],
    },
  } satisfies TopLevelSpec;
}

/** Mean exit depth against the metric over the q sweep (each point labelled by q). */
export function frontierChart(
  points: readonly (GatedPoint & { series?: string })[],
  metric: Metric,
): ChartSpec {
  const values = points.map((p) => ({
    q: p.q,
    mean_step: p.mean_step,
    value: p.value,
    qLabel: `q=${p.q}`,
    series: p.series ?? "model",
  }));
  const enc = {
    x: {
      field: "mean_step",
      type: "quantitative" as const,
      title: "mean exit step",
      scale: { zero: false },
    },
    y: metricY("value", metric),
  };
  return {
    $schema: SCHEMA,
    title: `Depth/${metric === "accuracy" ? "accuracy" : "perplexity"} frontier over q`,
    ...SIZE,
    data: { values },
    layer: [
      {
        mark: { type: "line", point: true },
        encoding: {
          ...enc,
          order: { field: "q", type: "quantitative" },
          color: { field: "series", type: "nominal", title: "" },
        },
      },
      {
        mark: { type: "text", dy: -10, fontSize: 10 },
        encoding: { ...enc, text: { field: "qLabel", type: "nominal" } },
      },
    ],
  } satisfies TopLevelSpec;
}

/** Multiple-choice acc / acc_norm at every loop step. */
export function mcStepChart(
  perStep: readonly { acc: number; acc_norm: number }[],
  source: string,
): ChartSpec {
  const values = perStep.flatMap((s, r) => [
    { step: r + 1, metric: "acc", value: s.acc },
    { step: r + 1, metric: "acc_norm", value: s.acc_norm },
  ]);
  return {
    $schema: SCHEMA,
    title: `Multiple choice (${source}) by loop step`,
    ...SIZE,
    data: { values },
    mark: { type: "line", point: true },
    encoding: {
      x: { field: "step", type: "ordinal", title: "loop step r", axis: { labelAngle: 0 } },
      y: {
        field: "value",
        type: "quantitative",
        title: "accuracy",
        scale: { domain: [0, 1] },
        axis: { format: ".0%" },
      },
      color: { field: "metric", type: "nominal", title: "" },
    },
  } satisfies TopLevelSpec;
}

/**
 * A metric as mean ± standard deviation over seeds, one point with an error bar per model
 * (x: "arm/label", in the given order), for multi-seed reproductions.
 */
export function seedSpreadChart(
  points: readonly { model: string; mean: number; sd: number }[],
  metric: Metric,
  title = `${metricName(metric)}, mean ± sd over seeds`,
): ChartSpec {
  const values = points.map((p) => ({ ...p, lo: p.mean - p.sd, hi: p.mean + p.sd }));
  const x = {
    field: "model",
    type: "nominal" as const,
    title: "model",
    sort: points.map((p) => p.model),
    axis: { labelAngle: 0 },
  };
  const scale = metric === "ppl" ? { zero: false } : yScale(metric);
  return {
    $schema: SCHEMA,
    title,
    ...SIZE,
    data: { values },
    layer: [
      {
        mark: { type: "rule" },
        encoding: {
          x,
          y: {
            field: "lo",
            type: "quantitative",
            title: metricName(metric),
            scale,
            axis: yAxis(metric),
          },
          y2: { field: "hi" },
        },
      },
      {
        mark: { type: "point", filled: true, size: 80 },
        encoding: { x, y: { field: "mean", type: "quantitative", scale } },
      },
    ],
  } satisfies TopLevelSpec;
}
