/* Node file I/O for evaluation inputs and outputs: MC item files, eval.json. */
import { writeFileAtomic } from "@loop/tensor/node";
import type { EvalFile } from "../eval-file.js";
import { type McItem, parseMcJsonl } from "../multiple-choice/mc-items.js";
import { parsePiqa } from "../multiple-choice/piqa.js";
import { readText } from "./read-folders.js";

/** Items of a generic `{context, choices, label}` JSONL file. */
export function readMcFile(path: string): McItem[] {
  return parseMcJsonl(readText(path), path);
}

/** PIQA items from its `{goal, sol1, sol2}` JSONL file and labels .lst file. */
export function readPiqaFiles(dataPath: string, labelsPath: string): McItem[] {
  return parsePiqa(readText(dataPath), readText(labelsPath), {
    data: dataPath,
    labels: labelsPath,
  });
}

/** Write eval.json atomically (2-space JSON). */
export function writeEvalFile(path: string, file: EvalFile): void {
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
}
