/*
 * The plain-text summary `looplm eval` prints for an eval.json: the metric (and multiple-choice
 * acc / acc_norm) at every loop step, then the threshold-exit table (q, mean exit step, metric),
 * then the exit rules' table (rule, mean exit step, metric), then, for a mixed-difficulty task,
 * the metric and the mean exit step (gate and rules) for each difficulty p.
 */
import type { EvalFile } from "../eval-file.js";
import { metricName } from "./run-data.js";
import { formatMetric, formatTable } from "./table.js";

/** A plain-text table, every column aligned right. */
function table(head: string[], rows: string[][]): string {
  return formatTable(head, rows, () => true, "text");
}

/**
 * A text table of an eval.json: the metric at every loop step (and the multiple-choice accuracies).
 */
export function formatEvalSummary(ev: EvalFile): string {
  const name = metricName(ev.metric);
  const head = ["step", name];
  const mc = ev.mc;
  if (mc) head.push(`${mc.source} acc`, `${mc.source} acc_norm`);
  const rows = ev.per_step.map((v, r) => {
    const row = [String(r + 1), formatMetric(ev.metric, v)];
    if (mc) {
      const m = mc.per_step[r];
      row.push(
        m ? formatMetric("accuracy", m.acc) : "—",
        m ? formatMetric("accuracy", m.acc_norm) : "—",
      );
    }
    return row;
  });
  const unit = ev.metric === "accuracy" ? `${ev.count} examples` : `${ev.count} tokens`;
  const parts = [
    `${ev.model.label} on ${ev.task.name} (${unit}${mc ? `; ${mc.items} ${mc.source} items` : ""})`,
    table(head, rows),
  ];
  if (ev.gated.length > 0)
    parts.push(
      table(
        ["q", "mean exit step", name],
        ev.gated.map((g) => [
          String(g.q),
          g.mean_step.toFixed(3),
          formatMetric(ev.metric, g.value),
        ]),
      ),
    );
  if (ev.exits && ev.exits.length > 0)
    parts.push(
      table(
        ["exit rule", "mean exit step", name],
        ev.exits.map((e) => [
          e.realisable ? e.rule : `${e.rule} (not realisable)`,
          e.mean_step.toFixed(3),
          formatMetric(ev.metric, e.value),
        ]),
      ),
    );
  if (ev.by_hops && ev.by_hops.length > 0) {
    const qs = ev.by_hops[0]!.gated.map((g) => g.q);
    parts.push(
      table(
        [
          "p",
          "rows",
          ...ev.per_step.map((_, r) => `step ${r + 1}`),
          ...qs.map((q) => `q ${q}: mean exit step`),
          ...qs.map((q) => `q ${q}: ${name}`),
        ],
        ev.by_hops.map((h) => [
          String(h.hops),
          String(h.count),
          ...h.per_step.map((v) => formatMetric(ev.metric, v)),
          ...h.gated.map((g) => g.mean_step.toFixed(3)),
          ...h.gated.map((g) => formatMetric(ev.metric, g.value)),
        ]),
      ),
    );
    const rules = ev.by_hops[0]!.exits ?? [];
    if (rules.length > 0)
      parts.push(
        table(
          [
            "p",
            ...rules.map((e) => `${e.rule}: mean exit step`),
            ...rules.map((e) => `${e.rule}: ${name}`),
          ],
          ev.by_hops.map((h) => [
            String(h.hops),
            ...(h.exits ?? []).map((e) => e.mean_step.toFixed(3)),
            ...(h.exits ?? []).map((e) => formatMetric(ev.metric, e.value)),
          ]),
        ),
      );
  }
  return `${parts.join("\n\n")}\n`;
}
