/*
 * log.jsonl on resume: keep the lines up to the checkpoint's step. A crash (or a full disk)
 * during an append can only tear the last line, so a last line that does not parse is dropped
 * and said so; any other damage is an error naming the file and line.
 */
import { inputFileExists, readInputText, writeFileAtomic } from "@loop/tensor/node";

export interface LogTrim {
  /** Lines kept (steps 1..step). */
  kept: number;
  /** Whether a torn last line was dropped. */
  droppedTorn: boolean;
}

/** Parse log.jsonl into its records; a torn last line is reported, not thrown. */
export function readLog(path: string): { records: { step: number }[]; torn: boolean } {
  // (by the one input rule: a FIFO under log.jsonl's name is refused, not waited on)
  if (!inputFileExists(path)) return { records: [], torn: false };
  const text = readInputText(path);
  const lines = text.split("\n");
  const records: { step: number }[] = [];
  let torn = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    const last = lines.slice(i + 1).every((l) => l.trim() === "");
    let rec: { step?: unknown };
    try {
      rec = JSON.parse(line) as { step?: unknown };
    } catch (e) {
      if (last) {
        torn = true;
        break;
      }
      throw new Error(`${path}:${i + 1} is not valid JSON (${(e as Error).message})`);
    }
    if (!Number.isInteger(rec.step)) throw new Error(`${path}:${i + 1} has no integer "step"`);
    records.push(rec as { step: number });
  }
  return { records, torn };
}

/** Rewrite log.jsonl to exactly the records of steps 1..step, checking they are all there. */
export function trimLog(path: string, step: number): LogTrim {
  const text = inputFileExists(path) ? readInputText(path).split("\n") : [];
  const { records, torn } = readLog(path);
  const kept: string[] = [];
  let n = 0;
  for (const line of text) {
    if (line.trim() === "" || n >= records.length) continue;
    const rec = records[n++]!;
    if (rec.step <= step) kept.push(line);
  }
  const steps = records.filter((r) => r.step <= step).map((r) => r.step);
  if (steps.length !== step || steps.some((s, i) => s !== i + 1)) {
    throw new Error(
      `${path} does not hold steps 1..${step} of the checkpoint (it has ${steps.length} line(s) up to step ${steps.at(-1) ?? 0}); the run folder is inconsistent`,
    );
  }
  writeFileAtomic(path, kept.map((l) => `${l}\n`).join(""));
  return { kept: kept.length, droppedTorn: torn };
}
