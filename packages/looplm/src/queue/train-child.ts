/**
 * The process a queue worker starts for each job (hidden command `looplm worker-job`): train
 * the job's run folder through the same trainJob as `looplm sweep`, resuming from its last
 * checkpoint when it has one, and report progress and the outcome as JSON lines on fd 3.
 *
 * Training is synchronous, so this process cannot see signals while it trains; the worker asks
 * it to stop by creating the stop file, which is checked after every step. If the worker itself
 * vanishes (kill -9) this process notices its parent changed and exits without writing, as a
 * lost machine would, so another worker can resume the folder after the job's lock expires.
 */
import { existsSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { noGrad, withScratch } from "@loop/tensor";
import { latestCheckpoint } from "@loop/train/node";
import { buildTask } from "../cli/options/task.js";
import { taskEvaluator, trainJob } from "../cli/run-training.js";
import type { TrainingJobData } from "./training-job.js";

/** Exit codes the worker reads. */
export const CHILD_EXIT = { done: 0, failed: 1, stopped: 3, orphaned: 4 } as const;

export type ChildMessage =
  | { type: "progress"; step: number; total: number; loss: number }
  | { type: "result"; steps: number; eval: NonNullable<ReturnType<typeof trainJob>["lastEval"]> }
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

/** Resume only a run trained with exactly these settings (a leftover of another sweep is retrained). */
function resumable(d: TrainingJobData): boolean {
  if (!latestCheckpoint(d.runDir)) return false;
  try {
    const run = JSON.parse(readFileSync(join(d.runDir, "run.json"), "utf8")) as {
      model?: unknown;
      train?: unknown;
    };
    const plain = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown;
    return (
      isDeepStrictEqual(run.model, plain(d.config)) && isDeepStrictEqual(run.train, plain(d.train))
    );
  } catch {
    return false;
  }
}

export async function runTrainingChild(d: TrainingJobData, stopFile: string): Promise<number> {
  // Ctrl-C reaches the whole process group: leave the decision to the worker (the stop file).
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => {});
  const parent = process.ppid;
  let lastSent = 0;
  try {
    const task = await buildTask(d.task);
    const resume = resumable(d);
    if (resume) process.stderr.write(`${d.label}: resuming ${latestCheckpoint(d.runDir)}\n`);
    const res = trainJob({
      runDir: d.runDir,
      task,
      taskInfo: d.taskInfo,
      config: d.config,
      train: d.train,
      evalCount: d.evalCount,
      resume,
      label: d.label,
      onStep: (m) => {
        const now = Date.now();
        if (now - lastSent < 500 && m.step !== d.train.steps) return;
        lastSent = now;
        send({ type: "progress", step: m.step, total: d.train.steps, loss: m.loss });
      },
      shouldStop: () => {
        if (process.ppid !== parent) process.exit(CHILD_EXIT.orphaned);
        return existsSync(stopFile);
      },
    });
    if (res.stopped) {
      send({ type: "stopped", step: res.steps });
      return CHILD_EXIT.stopped;
    }
    // A run that had already finished (its worker vanished before reporting) trains no step:
    // evaluate its final weights, which gives the numbers its last step computed.
    const ev =
      res.lastEval ??
      noGrad(() =>
        withScratch(() =>
          taskEvaluator(task, d.evalCount, Math.max(d.train.batchSize, 64))(res.model),
        ),
      );
    send({ type: "result", steps: res.steps, eval: ev });
    return CHILD_EXIT.done;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // System errors (disk full, I/O) may pass on another machine; anything else (bad settings,
    // a non-finite loss) would fail again the same way.
    const retry = typeof err.code === "string" && typeof err.syscall === "string";
    send({ type: "error", message: err.message ?? String(e), retry });
    return CHILD_EXIT.failed;
  }
}
