/**
 * A training job as it travels through the queue: everything a worker on another machine needs
 * to train one run folder (task flags, model config, training options), its id, and its result.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { ModelConfig } from "@loop/looped";
import { makeDirectory } from "@loop/tensor/node";
import type { TrainOptions } from "@loop/train";
import type { EvalRecord } from "@loop/train/node";
import { writeJsonFile } from "@loop/train/node";
import type { Backend } from "../backend.js";
import type { TaskFlags } from "../cli/options/task.js";

/** The BullMQ queue every looplm coordinator and worker uses (the Redis URL's /db separates sets). */
export const QUEUE_NAME = "looplm-training";

export interface TrainingJobData {
  /**
   * Format of this object, so an older worker can refuse a newer job clearly (2 added
   * `backend`; a worker still trains format 1).
   */
  v: 1 | 2;
  label: string;
  /** Absolute run folder, on a filesystem every worker sees at the same path. */
  runDir: string;
  /** The task's flags, rebuilt into a Task on the worker (corpus paths absolute). */
  task: TaskFlags;
  taskInfo: Record<string, unknown>;
  config: ModelConfig;
  train: TrainOptions;
  evalCount: number;
  /** The backend named by `--backend`; absent: the worker's own choice. */
  backend?: Backend;
}

export interface TrainingJobResult {
  steps: number;
  eval: EvalRecord;
  worker: string;
}

/** What a worker reports while it trains (job.progress). */
export interface TrainingJobProgress {
  worker: string;
  step: number;
  total: number;
  loss: number;
}

/** Written by the coordinator into the run folder; a worker that cannot read it cannot see the folder. */
export const JOB_MARKER = "queue-job.json";

/**
 * The job id: run folder × member × seed. The same command run twice (or on two machines) names
 * the same jobs, and BullMQ adds a job whose id exists only once.
 */
export function trainingJobId(d: Pick<TrainingJobData, "runDir" | "label" | "train">): string {
  const runDir = resolve(d.runDir);
  const hash = createHash("sha256")
    .update(`${runDir}\0${d.label}\0${d.train.seed}`)
    .digest("hex")
    .slice(0, 16);
  // BullMQ ids must not be integers nor contain ":"; keep the folder name readable.
  const name = basename(runDir).replace(/[^A-Za-z0-9._-]/g, "_");
  return `${name}-s${d.train.seed}-${hash}`;
}

/** Whether two jobs (one of them read back from Redis) train with the same settings. */
export function sameSettings(a: TrainingJobData, b: TrainingJobData): boolean {
  const s = (d: TrainingJobData) =>
    JSON.parse(
      JSON.stringify({
        task: d.task,
        config: d.config,
        train: d.train,
        evalCount: d.evalCount,
        backend: d.backend,
      }),
    ) as unknown;
  return isDeepStrictEqual(s(a), s(b));
}

export function writeJobMarker(d: TrainingJobData, id: string): void {
  makeDirectory(d.runDir);
  writeJsonFile(join(d.runDir, JOB_MARKER), { id, label: d.label });
}

/** Null when this machine sees the job's run folder, else why not (one line). */
export function runFolderProblem(d: TrainingJobData, id: string): string | null {
  const marker = join(d.runDir, JOB_MARKER);
  const shared = "run folders must be on a filesystem every worker mounts at the same path";
  if (!existsSync(marker))
    return `job ${d.label}: this worker cannot see its run folder ${d.runDir} (${shared})`;
  try {
    const m = JSON.parse(readFileSync(marker, "utf8")) as { id?: string };
    if (m.id === id) return null;
  } catch {
    // unreadable marker: report below
  }
  return `job ${d.label}: ${marker} belongs to another job (${shared})`;
}
