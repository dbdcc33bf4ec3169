/*
 * A training job as it travels through the queue: everything a worker on another machine needs
 * to train one run folder (task flags, model config, training options), its id, and its result.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { ModelConfig } from "@loop/looped";
import { makeDirectory, readJsonFile } from "@loop/tensor/node";
import type { TrainOptions } from "@loop/train";
import type { EvalRecord } from "@loop/train/node";
import { canonicalJson, writeJsonFile } from "@loop/train/node";
import type { Backend } from "../backend.js";
import type { TaskFlags } from "../cli/options/task.js";
import { printable } from "../cli/printable.js";
import { jobContent } from "./job-signature.js";

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
  /** HMAC-SHA256 of the rest, when the coordinator has a secret (job-signature.ts). */
  sig?: string;
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

/**
 * The job's record, written by the coordinator into the job's run folder (inside the sweep's
 * folder) when it enqueues the job: `{id, label, job}` with the job's full content. A worker
 * trains a job only if it is this record, so whoever can write to Redis cannot make a worker
 * train other settings, more steps or another folder than the coordinator asked for; and a
 * worker that cannot read it cannot see the folder.
 */
/**
 * What a worker, or its training child, says of a job whose member already finished (a replayed
 * job, or one whose result the queue never heard): it is not trained again.
 */
export function alreadyFinished(d: Pick<TrainingJobData, "runDir" | "label" | "train">): string {
  return `${printable(d.label)} in ${printable(d.runDir)} already finished its ${d.train.steps} steps (final/): not trained again; its numbers come from its log`;
}

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
  writeJsonFile(join(d.runDir, JOB_MARKER), { id, label: d.label, job: jobContent(d) });
}

/** The first place where `got` differs from `want`, as "train.steps 1000000000000 (recorded 300)". */
function firstDifference(want: unknown, got: unknown, path = ""): string | null {
  const isObj = (x: unknown): x is Record<string, unknown> =>
    typeof x === "object" && x !== null && !Array.isArray(x);
  if (isObj(want) && isObj(got)) {
    for (const k of [...new Set([...Object.keys(want), ...Object.keys(got)])].sort()) {
      const d = firstDifference(want[k], got[k], path ? `${path}.${k}` : k);
      if (d) return d;
    }
    return null;
  }
  if (canonicalJson(want) === canonicalJson(got)) return null;
  const show = (x: unknown) => {
    const t = x === undefined ? "absent" : canonicalJson(x);
    return t.length > 60 ? `${t.slice(0, 57)}...` : t;
  };
  return `${path || "the job"} ${show(got)} (recorded ${show(want)})`;
}

/** What a JSON value is, for a message ("an object", "a list", "null", "a number"). */
function kindOf(x: unknown): string {
  if (x === null) return "null";
  if (Array.isArray(x)) return "a list";
  return x === undefined ? "absent" : `a${typeof x === "object" ? "n" : ""} ${typeof x}`;
}

/** The longest job label and run folder a worker accepts. */
const MAX_LABEL = 256;
const MAX_PATH = 4096;

/**
 * Null when the job's label and run folder are strings of a label's and a path's length (every
 * message and check reads them), else why not: a job whose label is an object would otherwise
 * fail deep inside with "Cannot convert object to primitive value".
 */
export function jobShapeProblem(d: object): string | null {
  const j = d as Record<string, unknown>;
  if (typeof j.label !== "string") return `its label is ${kindOf(j.label)}, not a string`;
  if (typeof j.runDir !== "string") return `its run folder is ${kindOf(j.runDir)}, not a string`;
  // (a member's label is a few characters, a path at most PATH_MAX: anything longer is not one,
  // and would be printed whole in every line that names the job)
  if (j.label.length > MAX_LABEL)
    return `its label is ${j.label.length} characters long, more than a member's (at most ${MAX_LABEL})`;
  if (j.runDir.length > MAX_PATH)
    return `its run folder is ${j.runDir.length} characters long, more than a path's (at most ${MAX_PATH})`;
  return null;
}

export interface RecordProblem {
  message: string;
  /** Another worker (which may see the folder) may succeed. */
  retry: boolean;
}

/**
 * Null when the job is the one its sweep recorded in its run folder, else why not (one line;
 * the caller escapes it for printing). Reads only.
 */
export function jobRecordProblem(d: TrainingJobData, id: string): RecordProblem | null {
  const shape = jobShapeProblem(d);
  if (shape) return { message: `job ${id}: ${shape}; refused`, retry: false };
  const label = d.label;
  // (every refusal names the job; `retry`: another worker, which may see the folder, may succeed)
  const problem = (what: string, retry = false) => ({ message: `job ${label}: ${what}`, retry });
  if (typeof d.runDir !== "string" || !isAbsolute(d.runDir))
    return problem(`its run folder ${JSON.stringify(d.runDir)} is not an absolute path; refused`);
  const marker = join(d.runDir, JOB_MARKER);
  const shared = "run folders must be on a filesystem every worker mounts at the same path";
  if (!existsSync(marker)) {
    if (!existsSync(d.runDir))
      return problem(`this worker cannot see its run folder ${d.runDir} (${shared})`, true);
    // the folder is there, its record is not: no coordinator enqueued this job for it
    return problem(
      `its run folder ${d.runDir} holds no ${JOB_MARKER}: no sweep enqueued this job there (a forged job, or the folder was emptied); refused`,
    );
  }
  let m: { id?: unknown; job?: unknown };
  try {
    m = readJsonFile<typeof m>(marker);
  } catch (e) {
    return problem(`${marker} is not a job record (${(e as Error).message}); refused`);
  }
  if (m.id !== id)
    return problem(
      `${marker} records job ${JSON.stringify(m.id) ?? "(none)"}, not ${id}: a replayed or copied job; refused`,
    );
  if (m.job === undefined)
    return problem(
      `${marker} does not record the job's settings (an older looplm wrote it); run the sweep command again to record them`,
    );
  const diff = firstDifference(m.job, jobContent(d));
  if (diff) return problem(`not the job its sweep recorded in ${marker} (${diff}); refused`);
  return null;
}
