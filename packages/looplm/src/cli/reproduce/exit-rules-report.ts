/*
 * The exit-rules study's tables (text and Markdown) and its frontier plot: every rule point's
 * depth and metric with its mean exit step per p and decode time per token; each rule's verdict
 * on each claim; every threshold's test; the operating points.
 */
import { type ChartSpec, formatTable, type Metric } from "@loop/eval";
import {
  CLAIM_TEXT,
  type RuleRow,
  type RuleVerdict,
  type SeedRulesResult,
} from "./exit-rule-claims.js";
import { formatMeanSd } from "./stats.js";

type Both = { text: string; markdown: string };

function both(t: (md: boolean) => string): Both {
  return { text: t(false), markdown: t(true) };
}

const pct = (x: number) => `${(100 * x).toFixed(2)}`;

function signed(x: number, metric: Metric): string {
  const v = metric === "accuracy" ? 100 * x : x;
  return `${v < 0 ? "−" : "+"}${Math.abs(v).toFixed(2)}`;
}

const pv = (p: number) => (Number.isNaN(p) ? "n/a" : p < 0.001 ? "< 0.001" : p.toFixed(3));

/** Every rule point: mean exit step, metric, mean exit step per p, ms per decoded token. */
export function ruleTable(
  rows: readonly RuleRow[],
  seeds: readonly SeedRulesResult[],
  metric: Metric,
): Both {
  const hops = seeds[0]!.byHops.map((h) => h.hops);
  return both((md) =>
    formatTable(
      [
        "exit rule",
        "mean exit step (mean ± sd)",
        `${metric === "ppl" ? "perplexity" : "accuracy"} (mean ± sd)`,
        ...hops.map((p) => `exit step p = ${p}`),
        "decode ms/token",
      ],
      rows.map((r) => [
        r.kind === "oracle" ? "oracle (not realisable)" : r.rule,
        `${r.depth.mean.toFixed(2)} ± ${r.depth.sd.toFixed(2)}`,
        formatMeanSd(r.value, metric),
        ...r.depthByHops.map((d) => d.mean.toFixed(2)),
        r.msPerToken ? `${r.msPerToken.mean.toFixed(3)} ± ${r.msPerToken.sd.toFixed(3)}` : "–",
      ]),
      (i) => i > 0,
      md ? "markdown" : "text",
    ),
  );
}

/** Each rule's verdict on each claim, with its most significant threshold. */
export function verdictTable(verdicts: readonly RuleVerdict[], metric: Metric): Both {
  return both((md) =>
    formatTable(
      [
        "rule",
        "claim",
        "verdict",
        "thresholds judged",
        "deciding threshold",
        "its tested mean (95 % CI)",
        "p (Holm)",
      ],
      verdicts.map((v) => {
        // the threshold that decides the verdict (one that reads as the verdict, most significant)
        const deciding = v.tests.filter((t) => t.reading === v.verdict);
        const best = [...(deciding.length > 0 ? deciding : v.tests)].sort(
          (a, b) => a.pHolm - b.pHolm || b.interval.mean - a.interval.mean,
        )[0];
        const unit =
          v.claim === "b"
            ? (x: number) => `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(2)}`
            : (x: number) => signed(x, metric);
        return [
          v.kind,
          `(${v.claim}) ${CLAIM_TEXT[v.claim]}`,
          v.reason ? `${v.verdict} (${v.reason})` : v.verdict,
          String(v.tests.length),
          best ? best.rule : "–",
          best
            ? Number.isNaN(best.interval.lo)
              ? `${unit(best.interval.mean)} (n/a)`
              : `${unit(best.interval.mean)} [${unit(best.interval.lo)}, ${unit(best.interval.hi)}]`
            : "–",
          best ? pv(best.pHolm) : "–",
        ];
      }),
      (i) => i === 3 || i > 4,
      md ? "markdown" : "text",
    ),
  );
}

/** Every threshold's test on every claim. */
export function testTable(verdicts: readonly RuleVerdict[], metric: Metric): Both {
  const rows = verdicts.flatMap((v) =>
    v.tests.map((t) => {
      const unit =
        v.claim === "b"
          ? (x: number) => `${x < 0 ? "−" : "+"}${Math.abs(x).toFixed(2)}`
          : (x: number) => signed(x, metric);
      return [
        `(${t.claim})`,
        t.rule,
        t.depth.mean.toFixed(2),
        unit(t.interval.mean),
        Number.isNaN(t.interval.lo) ? "n/a" : `[${unit(t.interval.lo)}, ${unit(t.interval.hi)}]`,
        pv(t.p),
        pv(t.pHolm),
        t.reading,
      ];
    }),
  );
  return both((md) =>
    formatTable(
      [
        "claim",
        "threshold",
        "mean exit step",
        "tested mean",
        "95 % CI",
        "p",
        "p (Holm)",
        "at 5 % after Holm",
      ],
      rows,
      (i) => i > 1 && i < 7,
      md ? "markdown" : "text",
    ),
  );
}

/** The operating points against the deepest fixed exit and the oracle, with decode time. */
export function operatingTable(
  ops: readonly RuleRow[],
  rows: readonly RuleRow[],
  metric: Metric,
  R: number,
): Both {
  const deepest = rows.find((r) => r.rule === `fixed:${R}`)!;
  const oracle = rows.find((r) => r.kind === "oracle");
  const list = [deepest, ...ops, ...(oracle ? [oracle] : [])];
  return both((md) =>
    formatTable(
      [
        "operating point",
        "mean exit step",
        "loop steps saved",
        metric === "ppl" ? "perplexity" : "accuracy %",
        `vs fixed:${R}`,
        "decode ms/token",
        `time vs fixed:${R}`,
      ],
      list.map((r) => [
        r.kind === "oracle" ? "oracle (not realisable)" : r.rule,
        r.depth.mean.toFixed(2),
        `${(100 * (1 - r.depth.mean / R)).toFixed(1)} %`,
        metric === "ppl" ? r.value.mean.toFixed(2) : pct(r.value.mean),
        signed(r.value.mean - deepest.value.mean, metric),
        r.msPerToken ? r.msPerToken.mean.toFixed(3) : "–",
        r.msPerToken && deepest.msPerToken
          ? `${((100 * r.msPerToken.mean) / deepest.msPerToken.mean).toFixed(0)} %`
          : "–",
      ]),
      (i) => i > 0,
      md ? "markdown" : "text",
    ),
  );
}

/** Every rule's depth/metric curve on one plot, with the fixed-exit line and the oracle point. */
export function ruleFrontierChart(rows: readonly RuleRow[], metric: Metric): ChartSpec {
  const values = rows.map((r, i) => ({
    series: r.kind === "fixed" ? "fixed exit" : r.kind === "oracle" ? "oracle" : r.kind,
    mean_step: r.depth.mean,
    value: r.value.mean,
    order: r.kind === "fixed" ? r.depth.mean : i,
  }));
  const enc = {
    x: {
      field: "mean_step",
      type: "quantitative",
      title: "mean exit step",
      scale: { zero: false },
    },
    y: {
      field: "value",
      type: "quantitative",
      title: metric === "ppl" ? "perplexity" : "accuracy",
      ...(metric === "accuracy" ? { axis: { format: ".0%" } } : { scale: { type: "log" } }),
    },
    color: { field: "series", type: "nominal", title: "rule" },
  };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: "Exit rules: accuracy against mean exit step (mean over seeds)",
    width: 480,
    height: 300,
    data: { values },
    layer: [
      {
        transform: [{ filter: "datum.series !== 'oracle'" }],
        mark: { type: "line", point: true },
        encoding: { ...enc, order: { field: "mean_step", type: "quantitative" } },
      },
      {
        transform: [{ filter: "datum.series === 'oracle'" }],
        mark: { type: "point", shape: "diamond", size: 120, filled: true },
        encoding: enc,
      },
    ],
  };
}
