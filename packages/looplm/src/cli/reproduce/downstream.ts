/**
 * The downstream multiple-choice score of a study's language models (lm-evaluation-harness
 * protocol, `looplm eval --piqa`): each member's final checkpoint scores every item at every
 * loop step; accuracy (acc) per step is kept in <seed folder>/downstream.json, written atomically
 * once per member, so a resumed study scores only what is missing.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { evaluateMultipleChoice, type McItem, modelLoglikelihoods } from "@loop/eval";
import { readPiqaFiles } from "@loop/eval/node";
import { loadCheckpoint } from "@loop/looped/node";
import type { Task } from "@loop/tasks";
import { readJsonFile, writeFileAtomic } from "@loop/tensor/node";
import { runFolderName } from "../sweep-runner.js";
import type { McDef } from "./study-types.js";

/** Per member label: the accuracy at every loop step (the last is the model's). */
export type DownstreamScores = Record<string, number[]>;

const FILE = "downstream.json";

interface DownstreamFile {
  source: string;
  items: number;
  acc: DownstreamScores;
}

const itemCache = new Map<string, McItem[]>();

function items(def: McDef): McItem[] {
  const key = `${def.items}\n${def.labels}\n${def.limit ?? ""}`;
  let it = itemCache.get(key);
  if (!it) {
    it = readPiqaFiles(def.items, def.labels);
    if (def.limit !== undefined) it = it.slice(0, def.limit);
    itemCache.set(key, it);
  }
  return it;
}

/** Score every member of one seed's sweep (in `seedDir`) that has no score yet. */
export function scoreDownstream(
  seedDir: string,
  labels: readonly string[],
  def: McDef,
  task: Task,
  log?: (line: string) => void,
): DownstreamScores {
  const tok = task.tokenizer;
  if (!tok) throw new Error(`the ${def.name} evaluation needs a language-model task`);
  const path = join(seedDir, FILE);
  const list = items(def);
  const file: DownstreamFile = existsSync(path)
    ? readJsonFile<DownstreamFile>(path)
    : { source: def.name, items: list.length, acc: {} };
  if (file.source !== def.name || file.items !== list.length)
    throw new Error(
      `${path} holds ${file.source} scores on ${file.items} items, not ${def.name} on ${list.length}: remove it to rescore`,
    );
  for (const label of labels) {
    if (file.acc[label]) continue;
    const model = loadCheckpoint(join(seedDir, runFolderName(label), "final"));
    const r = evaluateMultipleChoice(list, tok, (reqs) =>
      modelLoglikelihoods(model, reqs, { batchSize: 16 }),
    );
    file.acc[label] = r.steps.map((s) => s.acc);
    log?.(`${label} ${def.name} acc ${(100 * file.acc[label]!.at(-1)!).toFixed(2)} %`);
    writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  }
  return Object.fromEntries(labels.map((l) => [l, file.acc[l]!]));
}
