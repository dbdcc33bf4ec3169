/*
 * `looplm sweep --queue`: the same members, run folders, sweep.json, table and report as the
 * single-machine sweep, with the members trained by queue workers instead of in this process.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SweepFile, SweepRow } from "@loop/eval";
import type { Backend } from "../backend.js";
import { CliError } from "../cli/errors.js";
import { TASK_DEFAULTS, type TaskFlags } from "../cli/options/task.js";
import {
  finishSweep,
  planSweep,
  runFolderName,
  type SweepJob,
  type SweepResult,
  sweepRow,
  sweepSchedule,
  writeSweepFile,
} from "../cli/sweep-runner.js";
import type { QueueAddress } from "./connection.js";
import { trainOnQueue } from "./coordinator.js";
import type { TrainingJobData } from "./training-job.js";

/** The task flags a worker needs, with file paths made absolute (its working folder differs). */
export function portableTaskFlags(f: TaskFlags): TaskFlags {
  const out = { task: f.task } as TaskFlags;
  for (const k of Object.keys(TASK_DEFAULTS) as (keyof typeof TASK_DEFAULTS)[])
    (out as unknown as Record<string, unknown>)[k] = f[k];
  if (existsSync(f.corpus)) out.corpus = resolve(f.corpus);
  if (existsSync(f.tokenizer)) out.tokenizer = resolve(f.tokenizer);
  return out;
}

/** A sweep's members as queue jobs, on the schedule its folder already follows. */
export interface QueuedSweepPlan {
  outDir: string;
  members: ReturnType<typeof planSweep>;
  /** What the table's numbers rest on beyond the flags (members extended, and how). */
  notes: string[];
  jobs: TrainingJobData[];
}

/**
 * The jobs that train a sweep's members on the queue (shared by `sweep --queue` and
 * `reproduce --queue`). A queued sweep always continues what its folder holds: a larger
 * --steps extends every member on one schedule, as on one machine with --resume. `label`
 * names a member's job (the progress table, the workers' lines); `reproduce` qualifies it with
 * the arm and seed, since it enqueues many sweeps at once.
 */
export function queuedSweepJobs(
  job: Omit<SweepJob, "resume" | "log" | "backend">,
  taskFlags: TaskFlags,
  /** The backend the user chose (undefined: each worker's own, by default its best). */
  backend?: Backend,
  label: (member: string) => string = (m) => m,
): QueuedSweepPlan {
  const outDir = resolve(job.outDir);
  const members = planSweep(job);
  const schedule = sweepSchedule(outDir, members, job.train);
  const jobs: TrainingJobData[] = members.map((m) => ({
    v: 2,
    label: label(m.label),
    runDir: join(outDir, runFolderName(m.label)),
    task: portableTaskFlags(taskFlags),
    taskInfo: job.taskInfo,
    config: m.config,
    train: schedule.train,
    evalCount: job.evalCount,
    ...(backend ? { backend } : {}),
  }));
  return { outDir, members, notes: schedule.notes, jobs };
}

export async function runQueuedSweep(
  job: Omit<SweepJob, "resume" | "log" | "backend">,
  taskFlags: TaskFlags,
  address: QueueAddress,
  /** The backend the user chose (undefined: each worker's own, by default its best). */
  backend?: Backend,
  /** Sign the jobs with this secret (job-signature.ts). */
  secret?: string,
  /** SIGINT/SIGTERM: stop watching; the jobs stay on the queue (WatchInterrupted). */
  signal?: AbortSignal,
): Promise<SweepResult> {
  const { outDir, members, notes, jobs } = queuedSweepJobs(job, taskFlags, backend);
  for (const n of notes) process.stderr.write(`looplm: ${n}\n`);
  const outcomes = await trainOnQueue(jobs, { address, stream: process.stderr, secret, signal });
  const rows: SweepRow[] = [];
  const failed: string[] = [];
  let metric: SweepFile["metric"] = job.task.metric;
  outcomes.forEach((o, i) => {
    if (o.state === "done") {
      metric = o.result.eval.metric;
      rows.push(sweepRow(members[i]!, o.result.eval));
    } else failed.push(`${members[i]!.label}: ${o.reason}`);
  });
  const sweep: SweepFile = { protocol: job.protocol, task: job.task.name, metric, rows };
  writeSweepFile(outDir, sweep);
  if (failed.length > 0)
    throw new CliError(
      `${failed.length} of ${members.length} members failed (sweep.json has the others): ${failed.join("; ")}`,
    );
  return finishSweep(outDir, sweep, notes);
}
