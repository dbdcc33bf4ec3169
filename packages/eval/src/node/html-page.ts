/*
 * One self-contained HTML page: inline CSS, inline SVG figures (rendered from Vega-Lite specs),
 * key/value tables and preformatted text; no script, no external resource.
 */
import type { ChartSpec } from "../report/charts.js";
import { renderChartSvg } from "./render-svg.js";

/** `s` with &, <, > and " escaped for HTML text and attributes. */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** One section of a report page: a chart, a facts list, a table, a text block or a note. */
export type Section =
  | { kind: "chart"; id: string; spec: ChartSpec }
  | { kind: "facts"; title: string; rows: [string, string][] }
  | { kind: "table"; title: string; head: string[]; rows: string[][] }
  | { kind: "text"; title: string; text: string }
  | { kind: "note"; text: string };

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}figure{display:inline-block;margin:.5em 1em .5em 0}
pre{background:#f6f6f6;padding:.6em;overflow:auto}.note{color:#777;font-style:italic}`;

async function sectionHtml(s: Section): Promise<string> {
  switch (s.kind) {
    case "chart": {
      const svg = await renderChartSvg(s.spec);
      const title = s.spec.title || s.id;
      return `<figure id="${escapeHtml(s.id)}" data-chart="${escapeHtml(title)}">${svg}</figure>`;
    }
    case "facts":
      return `<h2>${escapeHtml(s.title)}</h2><table>${s.rows
        .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`)
        .join("")}</table>`;
    case "table":
      return `<h2>${escapeHtml(s.title)}</h2><table><tr>${s.head
        .map((h) => `<th>${escapeHtml(h)}</th>`)
        .join("")}</tr>${s.rows
        .map(
          (r) =>
            `<tr>${r.map((c, i) => `<td${i > 0 ? ' class="n"' : ""}>${escapeHtml(c)}</td>`).join("")}</tr>`,
        )
        .join("")}</table>`;
    case "text":
      return `<h2>${escapeHtml(s.title)}</h2><pre>${escapeHtml(s.text)}</pre>`;
    case "note":
      return `<p class="note">${escapeHtml(s.text)}</p>`;
  }
}

/** A self-contained HTML page (charts rendered to inline SVG) of `sections` under `title`. */
export async function htmlPage(title: string, sections: readonly Section[]): Promise<string> {
  const body: string[] = [];
  for (const s of sections) body.push(await sectionHtml(s));
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body.join("\n")}
</body></html>
`;
}
