/**
 * The plot of a study's claims: for every paired-difference claim, the mean difference a − b over
 * seeds with its 95 % t-interval, and a tick at the margin the claim must clear. One chart per
 * metric (accuracy in points, perplexity as is), since their scales differ.
 */
import type { ChartSpec, Metric } from "@loop/eval";
import type { Verdict } from "./verdict.js";

const SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";

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
