/**
 * The token-by-token view: one column per input position, one row per loop step with that
 * step's prediction (shaded by its probability, green where it matches the target, red where it
 * does not), the targets underneath, and for a gated model the step chosen at q outlined.
 */
import type { InspectResult } from "../protocol.js";

function cell(tag: "td" | "th", text: string, cls?: string, title?: string): HTMLElement {
  const c = document.createElement(tag);
  c.textContent = text;
  if (cls) c.className = cls;
  if (title) c.title = title;
  return c;
}

function row(label: string, cells: HTMLElement[], cls?: string): HTMLTableRowElement {
  const tr = document.createElement("tr");
  if (cls) tr.className = cls;
  tr.append(cell("th", label), ...cells);
  return tr;
}

/** Render `r` into `host`; `chosen[t]` is the exit step at q for a gated model, else null. */
export function renderTokenView(
  host: HTMLElement,
  r: InspectResult,
  chosen: readonly number[] | null,
): void {
  const table = document.createElement("table");
  table.className = "tokens";
  table.append(
    row(
      "input",
      r.symbols.map((s) => cell("th", s)),
    ),
  );
  r.steps.forEach((s, i) => {
    const step = i + 1;
    const cells = s.predicted.map((id, t) => {
      const sym = r.vocab[id]!;
      const target = r.targets[t]!;
      const conf = s.confidence[t]!;
      const cls = [target === "" ? "free" : sym === target ? "hit" : "miss"];
      if (chosen !== null && chosen[t] === step) cls.push("chosen");
      const c = cell(
        "td",
        sym,
        cls.join(" "),
        `step ${step}, position ${t + 1}: ${sym} with p = ${conf.toFixed(3)}`,
      );
      c.style.setProperty("--conf", conf.toFixed(3));
      return c;
    });
    table.append(row(`r = ${step}`, cells, "step"));
  });
  table.append(
    row(
      "target",
      r.targets.map((s) => cell("td", s, "target")),
    ),
  );
  host.replaceChildren(table);
}
