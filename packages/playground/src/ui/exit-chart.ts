/**
 * The exit distribution of one input as a Vega-Lite heat map: p(r | t) for every position t
 * (columns) and loop step r (rows), with the step a threshold q chooses marked in each column.
 */
import type { TopLevelSpec } from "vega-lite";

export interface ExitCell {
  /** Position, 1-based, with its symbol for the axis label. */
  pos: number;
  symbol: string;
  /** Loop step r, 1-based. */
  step: number;
  p: number;
  chosen: boolean;
}

export function exitCells(
  pdf: readonly (readonly number[])[],
  chosen: readonly number[],
  symbols: readonly string[],
): ExitCell[] {
  const cells: ExitCell[] = [];
  pdf.forEach((row, r) => {
    row.forEach((p, t) => {
      cells.push({ pos: t + 1, symbol: symbols[t]!, step: r + 1, p, chosen: chosen[t] === r + 1 });
    });
  });
  return cells;
}

export function exitChart(q: number): TopLevelSpec {
  const x = { field: "pos", type: "ordinal" as const, title: "position", axis: { labelAngle: 0 } };
  const y = { field: "step", type: "ordinal" as const, title: "loop step r" };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `Exit distribution p(r | t); ● the step chosen at q = ${q}`,
    width: { step: 18 },
    height: { step: 22 },
    data: { values: [] },
    layer: [
      {
        mark: { type: "rect" },
        encoding: {
          x,
          y,
          color: {
            field: "p",
            type: "quantitative",
            title: "p",
            scale: { domain: [0, 1], scheme: "blues" },
          },
          tooltip: [
            { field: "symbol", type: "nominal" },
            { field: "step", type: "ordinal" },
            { field: "p", type: "quantitative", format: ".3f" },
          ],
        },
      },
      {
        transform: [{ filter: "datum.chosen" }],
        mark: { type: "point", filled: true, color: "#d62728", size: 50 },
        encoding: { x, y },
      },
    ],
  };
}
