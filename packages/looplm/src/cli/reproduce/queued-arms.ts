/*
 * `looplm reproduce --queue`: every member of every (arm, seed) sweep of a study goes on the
 * Redis queue at once, as `looplm sweep --queue` puts one sweep's members there (the same jobs,
 * run-folder records, signatures and coordinator), and `looplm worker`s train them. The study
 * then reads the finished folders back (`--resume`), as after `--jobs`: the numbers are those a
 * run on one machine prints, since training is deterministic whichever worker trains a member.
 */
import type { Backend } from "../../backend.js";
import type { QueueAddress } from "../../queue/connection.js";
import { trainOnQueue } from "../../queue/coordinator.js";
import { queuedSweepJobs } from "../../queue/queued-sweep.js";
import type { TrainingJobData } from "../../queue/training-job.js";
import { CliError } from "../errors.js";
import { armSweepJob, type TaskCache, taskFlags } from "./arm-inputs.js";
import type { StudyDef } from "./study-types.js";

/** Where a study's members train: the queue, its job secret, the backend every job names. */
export interface StudyQueue {
  address: QueueAddress;
  /** Sign every job (job-signature.ts); workers given the same secret train only signed jobs. */
  secret?: string;
  /** The backend the user chose (undefined: each worker's own, by default its best). */
  backend?: Backend;
}

export interface QueuedArmsOptions {
  outDir: string;
  /** The seeds to train (those without a finished seed's record). */
  seeds: readonly number[];
  queue: StudyQueue;
  tasks: TaskCache;
  /** SIGINT/SIGTERM: stop watching; the jobs stay on the queue (WatchInterrupted). */
  signal?: AbortSignal;
  log?: (line: string) => void;
  /** Where the progress table goes (default stderr). */
  stream?: NodeJS.WriteStream;
}

/** Train every (arm, seed) sweep of `def` on the queue; rejects naming every failed member. */
export async function trainArmsOnQueue(def: StudyDef, o: QueuedArmsOptions): Promise<void> {
  const jobs: TrainingJobData[] = [];
  for (const seed of o.seeds)
    for (const arm of def.arms) {
      const flags = taskFlags(arm.task);
      const task = await o.tasks.get(flags);
      const plan = queuedSweepJobs(
        armSweepJob(arm, seed, o.outDir, task),
        flags,
        o.queue.backend,
        // a member's job label: its arm, member and seed ("iso-param/1⊗4 seed 2")
        (member) => `${arm.id}/${member} seed ${seed}`,
      );
      for (const n of plan.notes) o.log?.(`looplm: ${arm.id} seed ${seed}: ${n}`);
      jobs.push(...plan.jobs);
    }
  o.log?.(
    `${def.name}: ${jobs.length} members on the queue at ${o.queue.address.display} (${def.arms.length} arm(s) × ${o.seeds.length} seed(s)); start \`looplm worker --queue …\` processes to train them`,
  );
  const outcomes = await trainOnQueue(jobs, {
    address: o.queue.address,
    stream: o.stream ?? process.stderr,
    secret: o.queue.secret,
    signal: o.signal,
  });
  const failed = outcomes.flatMap((r, i) =>
    r.state === "failed" ? [`${jobs[i]!.label}: ${r.reason}`] : [],
  );
  if (failed.length > 0)
    throw new CliError(
      `${failed.length} of ${jobs.length} members of ${def.name} failed (the others are kept; the same command trains the failed ones again): ${failed.join("; ")}`,
    );
}
