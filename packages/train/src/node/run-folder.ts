/*
 * Opening a run folder safely, the one place that decides what may happen to it (the CLI, the
 * training loop and a queue worker all call this):
 *  - the folder is created without hanging on impossible paths and locked for this process;
 *  - a folder that already holds a run is only continued (`resume`) or replaced (`overwrite`),
 *    never silently overwritten;
 *  - a resumed run keeps every recorded setting; only RESUME_CHANGES may differ, and `steps`
 *    only grows (the learning-rate schedule of the first plan is kept).
 */
import { existsSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ModelConfig } from "@loop/looped";
import { inputFileExists, makeDirectory, readJsonFile } from "@loop/tensor/node";
import { resolveTrainOptions, type TrainOptions } from "../options.js";
import { lockRunFolder, processAlive } from "./run-lock.js";

/** run.json: the settings a run was started with (plus whatever the caller recorded). */
export interface RunInfo {
  model: ModelConfig;
  train: TrainOptions;
  [extra: string]: unknown;
}

/**
 * An opened run folder, locked for this process: the run.json to resume (or null) and `release()`.
 */
export interface RunFolder {
  dir: string;
  /** run.json of the run being resumed; null for a new run. */
  info: RunInfo | null;
  /** Drop the lock (re-entrant: only the last release of this process removes it). */
  release(): void;
}

/**
 * How to open a folder that may hold a run: resume it, replace it, or neither (then a run already
 * there is an error).
 */
export interface RunFolderMode {
  /** Continue the run in the folder (error if it holds none). */
  resume?: boolean;
  /** Replace the run in the folder (its log, checkpoints and final weights are deleted). */
  overwrite?: boolean;
}

/** Training options a resumed run may change: none of them changes the numbers already trained. */
export const RESUME_CHANGES = ["steps", "evalEvery", "checkpointEvery", "checkpointing"] as const;
/** A training flag that may change when a run resumes. */
export type ResumeChange = (typeof RESUME_CHANGES)[number];

/** What a run leaves in its folder (run.lock aside); any of them means "holds a run". */
const RUN_ENTRIES = ["run.json", "log.jsonl", "checkpoints", "final"];
const RUN_EXTRAS = ["vocab.json", "tokenizer.json", "task.json"];

/** Whether `dir` holds a run (run.json, log, checkpoints or final weights). */
export function holdsRun(dir: string): boolean {
  return RUN_ENTRIES.some((e) => existsSync(join(dir, e)));
}

/** Read and check a run folder's run.json. */
export function readRunInfo(dir: string): RunInfo {
  const path = join(dir, "run.json");
  const info = readJsonFile<RunInfo>(path);
  if (typeof info !== "object" || info === null || !info.model || !info.train)
    throw new Error(`${path} lacks "model" or "train": it was not written by a looplm run`);
  return info;
}

/** `.name.tmp-<pid>-<time>` (writeFileAtomic) or `run.lock.tmp-<pid>-<time>`. */
const TEMP = /\.tmp-(\d+)-\d+$/;

/**
 * Remove temporary files that a killed process left behind mid-write (its PID is gone) in the
 * run folder and its checkpoint folders.
 */
function removeStaleTemporaries(dir: string): void {
  const ck = join(dir, "checkpoints");
  const dirs = [dir, join(dir, "final"), ck];
  if (existsSync(ck))
    for (const d of readdirSync(ck)) if (d.startsWith("step-")) dirs.push(join(ck, d));
  for (const d of dirs) {
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d)) {
      const m = TEMP.exec(f);
      if (m && !processAlive(Number(m[1]))) rmSync(join(d, f), { force: true });
    }
  }
}

/**
 * Open `dir` for a run, creating it, taking its lock (`run.lock`, taken over from a dead process)
 * and checking `mode` against what the folder holds.
 */
export function openRunFolder(dir: string, mode: RunFolderMode = {}): RunFolder {
  if (mode.resume && mode.overwrite)
    throw new Error("resume and overwrite exclude each other: choose one");
  // A folder this call creates is removed again if it is still empty when released: a run
  // refused before it wrote anything leaves no trace.
  const existed = existsSync(dir);
  makeDirectory(dir);
  const unlock = lockRunFolder(dir);
  const release = () => {
    unlock();
    if (!existed) {
      try {
        rmdirSync(dir);
      } catch {
        // not empty (the run wrote files) or already gone: keep it
      }
    }
  };
  try {
    removeStaleTemporaries(dir);
    let info: RunInfo | null = null;
    if (mode.resume) {
      if (!inputFileExists(join(dir, "run.json")))
        throw new Error(`nothing to resume in ${dir}: it holds no run.json`);
      info = readRunInfo(dir);
    } else if (holdsRun(dir)) {
      if (!mode.overwrite)
        throw new Error(
          `${dir} already holds a run: resume it (--resume) or replace it (--overwrite), or choose another folder`,
        );
      for (const e of [...RUN_ENTRIES, ...RUN_EXTRAS])
        rmSync(join(dir, e), { recursive: true, force: true });
    }
    return { dir, info, release };
  } catch (e) {
    release();
    throw e;
  }
}

/** The schedule length a recorded run uses (`scheduleSteps`, or `steps` where run.json has none). */
function scheduleOf(t: TrainOptions): number {
  return t.scheduleSteps ?? t.steps;
}

/**
 * The training options of a resumed run: the recorded ones with `changes` applied. Returns
 * notes to show the user (how an extended schedule continues).
 */
export function resumeTrainOptions(
  recorded: TrainOptions,
  changes: Partial<Pick<TrainOptions, ResumeChange>>,
): { train: TrainOptions; notes: string[] } {
  const notes: string[] = [];
  const steps = changes.steps ?? recorded.steps;
  if (steps < recorded.steps)
    throw new Error(
      `steps can only grow on resume: the run was planned for ${recorded.steps} steps, got ${steps}`,
    );
  const schedule = scheduleOf(recorded);
  if (steps > recorded.steps)
    notes.push(
      `extending the run from ${recorded.steps} to ${steps} steps: the learning rate keeps its ${schedule}-step warmup-cosine schedule and stays at its final value ${recorded.minLr.toExponential(2)} for steps ${schedule + 1}–${steps}`,
    );
  const train = resolveTrainOptions({
    ...recorded,
    ...changes,
    steps,
    scheduleSteps: steps > schedule ? schedule : recorded.scheduleSteps,
  });
  return { train, notes };
}

/**
 * JSON with object keys sorted at every level: the same text for the same content (recorded and
 * current settings compared; a queue job's signed content).
 */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/**
 * Check that a resumed run trains the recorded model with the recorded options; the first
 * difference is an error naming the setting.
 */
export function checkResumeMatches(
  dir: string,
  info: RunInfo,
  model: ModelConfig,
  train: TrainOptions,
): void {
  const where = join(dir, "run.json");
  // the recorded keys, and the optional one a config leaves out at its default (so a run started
  // with out_proj_scale "depth" cannot resume as "layers", nor the other way round)
  const keys = new Set([...Object.keys(info.model), "out_proj_scale"]);
  for (const k of keys as Set<keyof ModelConfig>) {
    if (canonicalJson(info.model[k]) !== canonicalJson(model[k]))
      throw new Error(
        `resume: the model's ${k} is ${canonicalJson(model[k])} but ${where} has ${canonicalJson(info.model[k])}`,
      );
  }
  if (train.steps < info.train.steps)
    throw new Error(`resume: steps can only grow (${where} has ${info.train.steps})`);
  const recorded = { ...info.train, scheduleSteps: scheduleOf(info.train) };
  const now = { ...train, scheduleSteps: scheduleOf(train) };
  for (const k of Object.keys(recorded) as (keyof TrainOptions)[]) {
    if ((RESUME_CHANGES as readonly string[]).includes(k)) continue;
    if (canonicalJson(recorded[k]) !== canonicalJson(now[k]))
      throw new Error(
        `resume: ${k} is ${canonicalJson(now[k])} but ${where} has ${canonicalJson(recorded[k])}; only ${RESUME_CHANGES.join(", ")} may change`,
      );
  }
}
