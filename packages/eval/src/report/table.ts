/*
 * The sweep comparison table (params, forward FLOPs/token, metric), as Markdown or aligned
 * plain text. Accuracy prints as a percentage with two decimals, perplexity with two decimals.
 */
import type { Metric } from "../eval-file.js";
import { metricName } from "./run-data.js";

/** One row of a sweep's comparison table. */
export interface TableRow {
  label: string;
  role: string;
  params: number;
  flops_per_token: number;
  metric_value: number;
}

/**
 * A metric value as printed: accuracy as a percentage with two decimals, perplexity with two
 * decimals.
 */
export function formatMetric(metric: Metric, v: number): string {
  if (!Number.isFinite(v)) return String(v);
  return metric === "accuracy" ? `${(100 * v).toFixed(2)} %` : v.toFixed(2);
}

/**
 * The comparison table of a sweep (label, role, params, FLOPs per token, metric), as text or
 * Markdown.
 */
export function comparisonTable(
  rows: readonly TableRow[],
  metric: Metric,
  format: "markdown" | "text" = "text",
): string {
  if (format !== "markdown" && format !== "text")
    throw new Error(
      `comparisonTable: format must be "markdown" or "text", got ${JSON.stringify(format)}`,
    );
  const body = rows.map((r) => comparisonCells(r, metric));
  return formatTable(comparisonHead(metric), body, (i) => i >= 2, format);
}

/** The columns of the comparison table: model, role, params, FLOPs/token, the metric. */
export function comparisonHead(metric: Metric): string[] {
  return ["model", "role", "params", "FLOPs/token", metricName(metric)];
}

/** A row's cells under `comparisonHead`. */
export function comparisonCells(r: TableRow, metric: Metric): string[] {
  return [
    r.label,
    r.role,
    r.params.toLocaleString("en-US"),
    r.flops_per_token.toLocaleString("en-US"),
    formatMetric(metric, r.metric_value),
  ];
}

/**
 * A table as Markdown or as aligned plain text (columns two spaces apart, a dashed rule under
 * the head); `right(i)` says which columns align right.
 */
export function formatTable(
  head: readonly string[],
  body: readonly (readonly string[])[],
  right: (column: number) => boolean,
  format: "markdown" | "text",
): string {
  if (format === "markdown") {
    const line = (c: readonly string[]) => `| ${c.join(" | ")} |`;
    const sep = head.map((_h, i) => (right(i) ? "---:" : "---"));
    return [line(head), line(sep), ...body.map(line)].join("\n");
  }
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (c: readonly string[]) =>
    c
      .map((x, i) => (right(i) ? x.padStart(w[i]!) : x.padEnd(w[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), w.map((n) => "-".repeat(n)).join("  "), ...body.map(line)].join("\n");
}
