/*
 * Vega-Lite spec → SVG string, headless: vega-lite compiles to a Vega spec, a Vega View with the
 * "none" renderer lays it out and serialises SVG (no canvas, no DOM, no network). Both packages
 * are optional peer dependencies, imported on the first chart.
 */
import type { TopLevelSpec } from "vega-lite";
import type { ChartSpec } from "../report/charts.js";
import { importOptional } from "./optional-import.js";

/**
 * Render a Vega-Lite chart to SVG text (needs the optional peer packages `vega` and `vega-lite`).
 */
export async function renderChartSvg(spec: ChartSpec): Promise<string> {
  const [vega, vegaLite] = await Promise.all([
    importOptional("vega", () => import("vega")),
    importOptional("vega-lite", () => import("vega-lite")),
  ]);
  const compiled = vegaLite.compile(spec as unknown as TopLevelSpec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
