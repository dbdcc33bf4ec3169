/**
 * The accuracy of a Mano study's members at every expression length ℓ = 1..L
 * (`evaluateManoByLength` of `@loop/eval`, the evaluation of `looplm eval --per-length`). Each
 * member's final checkpoint is scored once; the accuracy per ℓ and loop step is kept in
 * <seed folder>/per-length.json, written atomically after each member, so a resumed study scores
 * only what is missing (as downstream.ts keeps PIQA and cloze scores).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { evaluateManoByLength, MANO_LENGTH_STREAM } from "@loop/eval";
import { loadCheckpoint } from "@loop/looped/node";
import { MANO_DEFAULT_EVAL_SEED, ManoTask, type Task } from "@loop/tasks";
import type { CpuKernels } from "@loop/tensor/kernel";
import { readJsonFile, writeFileAtomic } from "@loop/tensor/node";
import { runFolderName } from "../sweep-runner.js";
import type { PerLengthDef } from "./study-types.js";

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
  const file: LengthFile = existsSync(path) ? readJsonFile<LengthFile>(path) : { ...want, acc: {} };
  const same = (Object.keys(want) as (keyof typeof want)[]).every((k) => file[k] === want[k]);
  if (!same)
    throw new Error(
      `${path} holds ${file.count} expressions per length of ${file.source} (seed ${file.seed}, L = ${file.max_ops}), not ${want.count} of ${want.source} (seed ${want.seed}, L = ${want.max_ops}): remove it to rescore`,
    );
  for (const label of labels) {
    if (file.acc[label]) continue;
    const model = loadCheckpoint(join(seedDir, runFolderName(label), "final"));
    const r = await evaluateManoByLength(model, task, { count: def.count, kernels });
    file.acc[label] = r.lengths.map((l) => l.steps.map((s) => s.accuracy));
    const last = file.acc[label]!.map((a, i) => `ℓ=${i + 1} ${(100 * a.at(-1)!).toFixed(1)} %`);
    log?.(`${label} per length: ${last.join(", ")}`);
    writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  }
  return Object.fromEntries(labels.map((l) => [l, file.acc[l]!]));
}
