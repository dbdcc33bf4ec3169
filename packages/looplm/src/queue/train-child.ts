/*
 * The process a queue worker starts for each job (hidden command `looplm worker-job`): train
 * the job's run folder through the same trainJob as `looplm sweep`, deciding as `sweep --resume`
 * does what its folder holds (finished: report its numbers; checkpointed: resume exactly;
 * otherwise: start it), and report progress and the outcome as JSON lines on fd 3.
 *
 * The worker stops it with SIGTERM (a checkpoint at the current step, then exit). If the worker
 * itself vanishes (kill -9) this process notices its parent changed and exits without writing,
 * as a lost machine would, so another worker can resume the folder after the job's lock expires.
 */
import { existsSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { readJsonFile, writeFileAtomic } from "@loop/tensor/node";
import type { EvalRecord } from "@loop/train/node";
import { holdsRun, LOCK_FILE, latestCheckpoint, RunInterrupted } from "@loop/train/node";
import type { ComputeBackend } from "../backend.js";
import { buildTask } from "../cli/options/task.js";
import { printable } from "../cli/printable.js";
import { trainJob } from "../cli/run-training.js";
import { memberStart } from "../cli/sweep-runner.js";
import { alreadyFinished, type TrainingJobData } from "./training-job.js";

/** Exit codes the worker reads. */
export const CHILD_EXIT = { done: 0, failed: 1, stopped: 3, orphaned: 4 } as const;

export type ChildMessage =
  | { type: "progress"; step: number; total: number; loss: number }
  | { type: "result"; steps: number; eval: EvalRecord }
  | { type: "stopped"; step: number }
  | { type: "error"; message: string; retry: boolean };

const CHANNEL_FD = 3;

function send(m: ChildMessage): void {
  try {
    writeSync(CHANNEL_FD, `${JSON.stringify(m)}\n`);
  } catch {
    // The worker is gone (EPIPE): stop without writing, as when its parent changes.
    process.exit(CHILD_EXIT.orphaned);
  }
}

/**
 * The queue says this job is ours: its previous worker lost the job's lock (killed, machine
 * lost, cut off), so a run.lock it left from another machine is stale. (A lock of a live process
 * on this machine is left to the folder lock, which refuses it.)
 */
function dropLockOfLostWorker(runDir: string): void {
  const path = join(runDir, LOCK_FILE);
  let owner: { pid?: number; host?: string };
  try {
    owner = readJsonFile<typeof owner>(path);
  } catch {
    return;
  }
  if (owner.host === hostname()) return;
  process.stderr.write(
    `looplm: taking over ${path} of process ${owner.pid} on ${owner.host} (its queue job lock expired)\n`,
  );
  rmSync(path, { force: true });
}

/**
 * For the queue's tests: `LOOPLM_PAUSE_AT_STEP=<step>:<file>` makes the training process, once
 * step <step> is logged and checkpointed (when it is a checkpoint step), write <file> (JSON:
 * label, runDir, step) and wait while that file exists, stopping as ever on SIGTERM or when its
 * worker vanishes. A test so kills a worker, stops it or restarts Redis at a known step, with
 * no race against a training too fast to catch.
 */
function pauseHook(d: TrainingJobData, signal: AbortSignal, parent: number) {
  const spec = process.env.LOOPLM_PAUSE_AT_STEP;
  const m = spec ? /^(\d+):(.+)$/.exec(spec) : null;
  if (!m) return null;
  const at = Number(m[1]);
  const file = m[2]!;
  return async (step: number) => {
    // (once: a released pause point does not stop the next job of the same worker)
    if (step !== at || existsSync(`${file}.released`)) return;
    writeFileAtomic(file, JSON.stringify({ label: d.label, runDir: d.runDir, step }));
    // (bounded by the test that removes the file, by a signal, or by the worker's end)
    while (existsSync(file) && !signal.aborted) {
      if (process.ppid !== parent) process.exit(CHILD_EXIT.orphaned);
      await sleep(20);
    }
  };
}

export async function runTrainingChild(
  d: TrainingJobData,
  backend: ComputeBackend,
): Promise<number> {
  const ac = new AbortController();
  // SIGTERM from the worker; SIGINT when Ctrl-C reaches the whole process group.
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => ac.abort());
  const parent = process.ppid;
  const pause = pauseHook(d, ac.signal, parent);
  let lastSent = 0;
  // (the job matched its sweep's record, but what it prints is escaped all the same)
  const label = printable(d.label);
  try {
    const start = memberStart(d.runDir, d.label, d.config, d.train);
    if (start.kind === "finished") {
      // Its worker vanished after training, before the queue heard the result.
      process.stderr.write(`${alreadyFinished(d)}\n`);
      send({ type: "result", steps: d.train.steps, eval: start.ev });
      return CHILD_EXIT.done;
    }
    const resume = start.kind === "resume";
    if (resume)
      process.stderr.write(`${label}: resuming ${printable(latestCheckpoint(d.runDir))}\n`);
    dropLockOfLostWorker(d.runDir);
    const task = await buildTask(d.task);
    const res = await trainJob({
      runDir: d.runDir,
      task,
      taskInfo: d.taskInfo,
      config: d.config,
      train: resume ? start.train : d.train,
      evalCount: d.evalCount,
      backend,
      resume,
      // A folder with a run but no checkpoint yet (killed in its first steps) starts again.
      overwrite: !resume && holdsRun(d.runDir),
      signal: ac.signal,
      label,
      onStep: (m) => {
        if (process.ppid !== parent) process.exit(CHILD_EXIT.orphaned);
        const now = Date.now();
        if (now - lastSent >= 500 || m.step === d.train.steps) {
          lastSent = now;
          send({ type: "progress", step: m.step, total: d.train.steps, loss: m.loss });
        }
        return pause?.(m.step);
      },
    });
    if (!res.lastEval) throw new Error(`${label}: the run produced no evaluation`);
    send({ type: "result", steps: res.steps, eval: res.lastEval });
    return CHILD_EXIT.done;
  } catch (e) {
    if (e instanceof RunInterrupted) {
      send({ type: "stopped", step: e.step });
      return CHILD_EXIT.stopped;
    }
    const err = e as NodeJS.ErrnoException;
    // System errors (disk full, I/O) may pass on another machine; anything else (bad settings,
    // a non-finite loss) would fail again the same way.
    const system = (x: unknown) =>
      typeof (x as NodeJS.ErrnoException | undefined)?.syscall === "string";
    const retry = system(err) || system(err.cause);
    send({ type: "error", message: err.message ?? String(e), retry });
    return CHILD_EXIT.failed;
  }
}
