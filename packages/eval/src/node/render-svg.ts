/**
 * Vega-Lite spec → SVG string, headless: vega-lite compiles to a Vega spec, a Vega View with the
 * "none" renderer lays it out and serialises SVG (no canvas, no DOM, no network).
 */
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";

export async function renderChartSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
