/*
 * The downstream scores of a study's language models, both multiple choice under the
 * lm-evaluation-harness protocol (`looplm eval --piqa`): a multiple-choice set in PIQA's files,
 * and the last-word cloze of the corpus's held-out documents (`@loop/eval`); and the accuracy of
 * a Mano study's members at every expression length ℓ = 1..L (`evaluateManoByLength` of
 * `@loop/eval`, the evaluation of `looplm eval --per-length`). Each member's final checkpoint
 * scores every item at every loop step; the scores are kept in <seed folder>/downstream.json
 * (PIQA), cloze.json or per-length.json, written atomically once per member, so a resumed study
 * scores only what is missing. The scoring runs on the CPU kernels given (the study's backend's).
 */
import { join } from "node:path";
import {
  evaluateManoByLength,
  evaluateMultipleChoice,
  MANO_LENGTH_STREAM,
  type McItem,
  modelLoglikelihoods,
} from "@loop/eval";
import { corpusClozeItems, readPiqaFiles } from "@loop/eval/node";
import type { LoopedModel } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { MANO_DEFAULT_EVAL_SEED, ManoTask, type Task } from "@loop/tasks";
import type { CpuKernels } from "@loop/tensor/kernel";
import { inputFileExists, readJsonFile } from "@loop/tensor/node";
import { writeJsonFile } from "@loop/train/node";
import { runFolderName } from "../sweep-runner.js";
import type { ClozeDef, McDef, PerLengthDef } from "./study-types.js";

/** Per member label: the accuracy at every loop step (the last is the model's). */
export type DownstreamScores = Record<string, number[]>;

/** The cloze's name in tables and verdicts. */
export const CLOZE_NAME = "last-word cloze";

interface ScoreFile {
  source: string;
  items: number;
  acc: DownstreamScores;
}

/** A scored set: its name, the file its scores go to, and its items. */
export interface ItemSet {
  name: string;
  file: string;
  items: McItem[];
}

const piqaCache = new Map<string, McItem[]>();

/** The multiple-choice set `def` (PIQA's files), scored into downstream.json. */
export function piqaSet(def: McDef): ItemSet {
  const key = `${def.items}\n${def.labels}\n${def.limit ?? ""}`;
  let it = piqaCache.get(key);
  if (!it) {
    it = readPiqaFiles(def.items, def.labels);
    if (def.limit !== undefined) it = it.slice(0, def.limit);
    piqaCache.set(key, it);
  }
  return { name: def.name, file: "downstream.json", items: it };
}

const clozeCache = new Map<string, Promise<McItem[]>>();

/** The cloze of `corpus`'s validation split (the one its LM task holds out), into cloze.json. */
export async function clozeSet(corpus: string, def: ClozeDef): Promise<ItemSet> {
  const key = `${corpus}\n${def.choices}\n${def.limit}`;
  let it = clozeCache.get(key);
  if (!it) {
    it = corpusClozeItems(corpus, { choices: def.choices, limit: def.limit });
    clozeCache.set(key, it);
  }
  return { name: CLOZE_NAME, file: "cloze.json", items: await it };
}

/**
 * Score every member of one seed's sweep (in `seedDir`) on `set` that has no score yet; the set's
 * name and every member's scores.
 */
export async function scoreMembers(
  seedDir: string,
  labels: readonly string[],
  set: ItemSet,
  task: Task,
  kernels: CpuKernels,
  log?: (line: string) => void,
): Promise<{ name: string; acc: DownstreamScores }> {
  const tok = task.tokenizer;
  if (!tok) throw new Error(`the ${set.name} evaluation needs a language-model task`);
  const path = join(seedDir, set.file);
  const file: ScoreFile = inputFileExists(path)
    ? readJsonFile<ScoreFile>(path)
    : { source: set.name, items: set.items.length, acc: {} };
  if (file.source !== set.name || file.items !== set.items.length)
    throw new Error(
      `${path} holds ${file.source} scores on ${file.items} items, not ${set.name} on ${set.items.length}: remove it to rescore`,
    );
  const acc = await scoreMissing(seedDir, labels, path, file, (model, label) => {
    const r = evaluateMultipleChoice(set.items, tok, (reqs) =>
      modelLoglikelihoods(model, reqs, { batchSize: 16, kernels }),
    );
    const perStep = r.steps.map((s) => s.acc);
    log?.(`${label} ${set.name} acc ${(100 * perStep.at(-1)!).toFixed(2)} %`);
    return perStep;
  });
  return { name: set.name, acc };
}

/**
 * Score each member of `labels` that `file` (kept at `path`) has no score for yet on its final
 * checkpoint, writing the file after each; every member's score.
 */
async function scoreMissing<S>(
  seedDir: string,
  labels: readonly string[],
  path: string,
  file: { acc: Record<string, S> },
  score: (model: LoopedModel, label: string) => S | Promise<S>,
): Promise<Record<string, S>> {
  for (const label of labels) {
    if (file.acc[label]) continue;
    const model = loadCheckpoint(join(seedDir, runFolderName(label), "final"));
    file.acc[label] = await score(model, label);
    writeJsonFile(path, file);
  }
  return Object.fromEntries(labels.map((l) => [l, file.acc[l]!]));
}

/** Per member label: acc[ℓ − 1][r − 1], the accuracy at length ℓ and loop step r. */
export type LengthScores = Record<string, number[][]>;

interface LengthFile {
  source: string;
  seed: number;
  count: number;
  max_ops: number;
  acc: LengthScores;
}

/**
 * Score every member of one seed's sweep (in `seedDir`) that has no per-length score yet, on
 * `kernels` (the study's backend's).
 */
export async function scorePerLength(
  seedDir: string,
  labels: readonly string[],
  def: PerLengthDef,
  task: Task,
  kernels: CpuKernels,
  log?: (line: string) => void,
): Promise<LengthScores> {
  if (!(task instanceof ManoTask))
    throw new Error(`the per-length evaluation needs a Mano task, not ${task.name}`);
  const want = {
    source: MANO_LENGTH_STREAM,
    seed: MANO_DEFAULT_EVAL_SEED,
    count: def.count,
    max_ops: task.maxOps,
  };
  const path = join(seedDir, "per-length.json");
  const file: LengthFile = inputFileExists(path)
    ? readJsonFile<LengthFile>(path)
    : { ...want, acc: {} };
  const same = (Object.keys(want) as (keyof typeof want)[]).every((k) => file[k] === want[k]);
  if (!same)
    throw new Error(
      `${path} holds ${file.count} expressions per length of ${file.source} (seed ${file.seed}, L = ${file.max_ops}), not ${want.count} of ${want.source} (seed ${want.seed}, L = ${want.max_ops}): remove it to rescore`,
    );
  return scoreMissing(seedDir, labels, path, file, async (model, label) => {
    const r = await evaluateManoByLength(model, task, { count: def.count, kernels });
    const acc = r.lengths.map((l) => l.steps.map((s) => s.accuracy));
    const last = acc.map((a, i) => `ℓ=${i + 1} ${(100 * a.at(-1)!).toFixed(1)} %`);
    log?.(`${label} per length: ${last.join(", ")}`);
    return acc;
  });
}
