/*
 * Multiple-choice items and the generic JSONL format, one item a line:
 *   {"context": string, "choices": [string, …] (≥ 2), "label": integer index of the right choice}
 * Blank lines are skipped. Every malformed line is an error naming the line and the field.
 */
import { parseJson } from "../report/run-data.js";

/** One multiple-choice item: a context, its choices and the index of the right one. */
export interface McItem {
  context: string;
  choices: string[];
  label: number;
}

/**
 * Validate one item (`where` names it in errors, `choiceName` a choice: PIQA calls them sol1,
 * sol2). The one rule for every multiple-choice source: ≥ 2 non-empty choices, a label among them.
 */
export function checkMcItem(
  raw: unknown,
  where: string,
  choiceName: (i: number) => string = (i) => `"choices"[${i}]`,
): McItem {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new Error(
      `${where}: expected an object {context, choices, label}, got ${JSON.stringify(raw)}`,
    );
  const o = raw as Record<string, unknown>;
  if (typeof o.context !== "string")
    throw new Error(`${where}: "context" must be a string, got ${JSON.stringify(o.context)}`);
  if (!Array.isArray(o.choices) || o.choices.length < 2)
    throw new Error(
      `${where}: "choices" must be an array of ≥ 2 strings, got ${JSON.stringify(o.choices)}`,
    );
  o.choices.forEach((c, i) => {
    if (typeof c !== "string" || c.length === 0)
      throw new Error(
        `${where}: ${choiceName(i)} must be a non-empty string, got ${JSON.stringify(c)}`,
      );
  });
  const label = o.label;
  if (
    typeof label !== "number" ||
    !Number.isInteger(label) ||
    label < 0 ||
    label >= o.choices.length
  )
    throw new Error(
      `${where}: "label" must be an integer in [0, ${o.choices.length - 1}], got ${JSON.stringify(label)}`,
    );
  return { context: o.context, choices: [...(o.choices as string[])], label };
}

/** Split JSONL text into parsed values with their 1-based line numbers. */
export function parseJsonLines(text: string, source: string): { line: number; value: unknown }[] {
  const out: { line: number; value: unknown }[] = [];
  text.split("\n").forEach((l, i) => {
    if (l.trim() === "") return;
    out.push({ line: i + 1, value: parseJson(l, `${source}:${i + 1}`) });
  });
  return out;
}

/** Parse the generic `{context, choices, label}` JSONL text. */
export function parseMcJsonl(text: string, source = "mc.jsonl"): McItem[] {
  const items = parseJsonLines(text, source).map(({ line, value }) =>
    checkMcItem(value, `${source}:${line}`),
  );
  if (items.length === 0) throw new Error(`${source}: no items (expected ≥ 1 JSON line)`);
  return items;
}
