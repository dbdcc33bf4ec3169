/*
 * PIQA in the lm-evaluation-harness form: each `{goal, sol1, sol2}` line of the data file and
 * the label (0 or 1) on the same line of the labels .lst file become
 *   context "Question: {goal}\nAnswer:",  choices [sol1, sol2],  label
 * (the harness's `piqa` task: doc_to_text, doc_to_choice; continuations get " " in front).
 */
import { checkMcItem, type McItem, parseJsonLines } from "./mc-items.js";

/** The context PIQA items get, as in lm-evaluation-harness: "Question: <goal>\nAnswer:". */
export function piqaContext(goal: string): string {
  return `Question: ${goal}\nAnswer:`;
}

/**
 * PIQA items from its JSONL file and its labels file (one 0/1 per line); errors name the file and
 * line.
 */
export function parsePiqa(
  jsonlText: string,
  labelsText: string,
  sources: { data?: string; labels?: string } = {},
): McItem[] {
  const dataName = sources.data ?? "piqa.jsonl";
  const labelName = sources.labels ?? "labels.lst";
  const rows = parseJsonLines(jsonlText, dataName);
  // Each item's fields first: a malformed item is named by its line and field, not reported as
  // a label count that no longer matches.
  const docs = rows.map(({ line, value }) => {
    const where = `${dataName}:${line}`;
    const o = value as Record<string, unknown> | null;
    if (o === null || typeof o !== "object" || Array.isArray(o))
      throw new Error(`${where}: expected an object {goal, sol1, sol2}`);
    for (const k of ["goal", "sol1", "sol2"]) {
      if (!(k in o))
        throw new Error(`${where}: the item has no "${k}" (PIQA items are {goal, sol1, sol2})`);
      if (typeof o[k] !== "string")
        throw new Error(`${where}: "${k}" must be a string, got ${JSON.stringify(o[k])}`);
    }
    return { where, goal: o.goal as string, sol1: o.sol1 as string, sol2: o.sol2 as string };
  });
  const labels = labelsText
    .split("\n")
    .map((l, i) => ({ text: l.trim(), line: i + 1 }))
    .filter((l) => l.text !== "");
  if (labels.length !== rows.length)
    throw new Error(
      `${labelName}: has ${labels.length} labels but ${dataName} has ${rows.length} items (expected one label per item)`,
    );
  return docs.map((d, i) => {
    const l = labels[i]!;
    if (l.text !== "0" && l.text !== "1")
      throw new Error(`${labelName}:${l.line}: label must be 0 or 1, got "${l.text}"`);
    const item = { context: piqaContext(d.goal), choices: [d.sol1, d.sol2], label: Number(l.text) };
    return checkMcItem(item, d.where, (c) => `"sol${c + 1}"`);
  });
}
