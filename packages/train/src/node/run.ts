/*
 * A training run in a folder: fresh or resumed (`resume: true` continues from the newest valid
 * checkpoint and reproduces the uninterrupted run exactly), periodic evaluation and checkpoints,
 * metrics appended to log.jsonl, final weights in final/. The folder is opened through
 * `openRunFolder` (locked, never silently overwritten, resumed only with its recorded settings).
 * The loop yields to the event loop between steps, so an `AbortSignal` (SIGINT/SIGTERM) stops it
 * after the current step with a checkpoint.
 */
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import type { LoopedModel } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";
import type { Task } from "@loop/tasks";
import { noGrad, withScratch } from "@loop/tensor";
import type { CpuKernels } from "@loop/tensor/kernel";
import { fsError, writeFileAtomic } from "@loop/tensor/node";
import { freezeForStage } from "../objective.js";
import type { TrainOptions } from "../options.js";
import type { StepEngine } from "../step-engine.js";
import { type StepMetrics, Trainer } from "../trainer.js";
import {
  checkpointCandidates,
  loadTrainingCheckpoint,
  pendingLogLine,
  saveTrainingCheckpoint,
  stepDirName,
  writeJsonFile,
} from "./run-files.js";
import { checkResumeMatches, openRunFolder, type RunInfo } from "./run-folder.js";
import { readLog, trimLog } from "./run-log.js";

/** One evaluation in log.jsonl: the metric, its value at every loop step and at step R. */
export interface EvalRecord {
  metric: "accuracy" | "ppl";
  /** Metric of every loop step r = 1..R. */
  per_step: number[];
  /** The metric of step R (what pre-training optimises). */
  final: number;
  [extra: string]: unknown;
}

/**
 * Options of `runTraining`: the folder, model, task, training options, resume/overwrite, the step
 * engine, evaluation and hooks.
 */
export interface RunOptions {
  runDir: string;
  model: LoopedModel;
  task: Task;
  train: TrainOptions;
  /** Continue from the run's newest valid checkpoint (error if none). */
  resume?: boolean;
  /** Replace a run already in the folder (otherwise that is an error). */
  overwrite?: boolean;
  /** Stop after the current step, checkpoint, and throw `RunInterrupted`. */
  signal?: AbortSignal;
  /**
   * Called before each span of computation (a step, an evaluation) with its kind; the function
   * it returns is called after it. Lets a caller stop the process during a long one (signal
   * handlers cannot run inside synchronous work).
   */
  spans?: (kind: "step" | "eval") => () => void;
  /**
   * Where the steps run when not on the CPU kernels (a GPU, made from `model` for this stage);
   * its weights are copied back into `model` before each evaluation and checkpoint.
   */
  engine?: StepEngine;
  /**
   * The CPU kernels the steps run on without an engine (a backend's); absent: those the
   * kernel-set registry holds at each step. `evaluate` chooses its own.
   */
  kernels?: CpuKernels;
  /**
   * Evaluate the model (called without gradient recording); may resolve later when the work
   * runs elsewhere (an engine's device).
   */
  evaluate?: (model: LoopedModel) => EvalRecord | Promise<EvalRecord>;
  /**
   * Called after every step, its log line and any checkpoint written (progress display); a
   * returned promise is awaited before the next step.
   */
  onStep?: (m: StepMetrics & { eval?: EvalRecord }) => void | Promise<void>;
  /** Things the user should know (a damaged checkpoint skipped, a torn log line dropped). */
  onNote?: (line: string) => void;
  /** Extra fields for run.json (task options, etc.). */
  info?: Record<string, unknown>;
}

/**
 * What `runTraining` returns: steps done, the last loss and evaluation, and the folder of the final
 * weights.
 */
export interface RunResult {
  steps: number;
  lastLoss: number;
  lastEval: EvalRecord | null;
  finalDir: string;
}

/** Training stopped by a signal; a checkpoint of `step` is in `checkpoint`. */
export class RunInterrupted extends Error {
  /** The error's name. */
  override name = "RunInterrupted";
  constructor(
    readonly runDir: string,
    readonly step: number,
    readonly checkpoint: string,
  ) {
    super(`interrupted after step ${step}; checkpoint saved in ${checkpoint}`);
  }
}

/**
 * The last step log.jsonl holds intact when its last line is torn, else null. A checkpoint past
 * it cannot be resumed from (its step's line is lost), so an older one is, and the steps between
 * are trained again — the same numbers, the run being deterministic.
 */
function tornLogLimit(logPath: string): number | null {
  const { records, torn } = readLog(logPath);
  return torn ? (records.at(-1)?.step ?? 0) : null;
}

/** Load the newest checkpoint that passes every check, noting the damaged ones skipped. */
function restore(o: RunOptions, trainer: Trainer): string {
  const problems: string[] = [];
  const logPath = join(o.runDir, "log.jsonl");
  const limit = tornLogLimit(logPath);
  for (const dir of checkpointCandidates(o.runDir)) {
    const step = Number(/step-(\d+)$/.exec(dir)?.[1]);
    if (limit !== null && step > limit) {
      o.onNote?.(
        `${logPath} lost the line of step ${step} (its last line was torn): ${dir} is passed over for an older checkpoint, and the steps after it are trained again`,
      );
      continue;
    }
    try {
      trainer.setState(loadTrainingCheckpoint(dir, o.model));
      for (const p of problems) o.onNote?.(`${p}; resuming from ${dir} instead`);
      return dir;
    } catch (e) {
      problems.push(`skipped damaged checkpoint: ${(e as Error).message}`);
    }
  }
  if (problems.length)
    throw new Error(
      `resume: no valid checkpoint in ${join(o.runDir, "checkpoints")} (${problems.join("; ")})`,
    );
  throw new Error(`resume: no checkpoint in ${join(o.runDir, "checkpoints")}`);
}

const nextTick = () => new Promise<void>((r) => setImmediate(r));

/**
 * Train `o.model` in the run folder `o.runDir`: run.json, log.jsonl, rotating checkpoints and final
 * weights, resumable exactly, stopped cleanly by `o.signal`.
 */
export async function runTraining(o: RunOptions): Promise<RunResult> {
  const folder = openRunFolder(o.runDir, { resume: o.resume, overwrite: o.overwrite });
  try {
    return await train(o, folder.info);
  } finally {
    folder.release();
  }
}

async function train(o: RunOptions, recorded: RunInfo | null): Promise<RunResult> {
  const logPath = join(o.runDir, "log.jsonl");
  const finalDir = join(o.runDir, "final");
  freezeForStage(o.model, o.train.stage);
  const trainer = new Trainer(
    o.model,
    o.task,
    o.train,
    o.engine ?? null,
    o.kernels ?? null,
    o.onNote ?? console.warn,
  );
  let pending: ({ step: number } & Record<string, unknown>) | null = null;
  if (recorded) {
    checkResumeMatches(o.runDir, recorded, o.model.config, o.train);
    const restoredFrom = restore(o, trainer);
    if (trainer.step >= o.train.steps && existsSync(join(finalDir, "model.safetensors")))
      throw new Error(
        `resume: the run in ${o.runDir} already finished its ${o.train.steps} steps; resume with more steps to train it further`,
      );
    if (trainer.step > o.train.steps)
      throw new Error(
        `resume: the checkpoint is at step ${trainer.step}, past the run's ${o.train.steps} steps`,
      );
    // (a checkpoint whose step the log lacks, written before that step's evaluation: its line
    // is logged below, once the evaluation can run)
    pending = pendingLogLine(restoredFrom);
    const logged = readLog(logPath).records.at(-1)?.step ?? 0;
    if (pending && (pending.step !== trainer.step || logged !== pending.step - 1)) pending = null;
    if (trimLog(logPath, trainer.step - (pending ? 1 : 0)).droppedTorn)
      o.onNote?.(
        `dropped a torn last line of ${logPath} (an append cut short by a crash or a full disk)`,
      );
  } else {
    writeFileAtomic(logPath, "");
  }
  writeJsonFile(join(o.runDir, "run.json"), {
    ...recorded,
    ...o.info,
    model: o.model.config,
    train: o.train,
    seed: o.train.seed,
    stage: o.train.stage,
  });
  let last: { loss: number } | null = null;
  let lastEval: EvalRecord | null = null;
  if (recorded) {
    // A run resumed at its last step (final/ was not written yet) still reports its numbers.
    const records = readLog(logPath).records as { loss?: number; eval?: EvalRecord }[];
    last = records.at(-1) as { loss: number } | null;
    lastEval = records.filter((r) => r.eval).at(-1)?.eval ?? null;
  }
  let saved = trainer.step;
  const every = (k: number, s: number) => k > 0 && s % k === 0;
  const evaluateAt = (s: number) =>
    o.evaluate !== undefined && (every(o.train.evalEvery, s) || s === o.train.steps);
  const checkpointAt = (s: number) => every(o.train.checkpointEvery, s) || s === o.train.steps;
  const evaluate = async (): Promise<EvalRecord> => {
    const done = o.spans?.("eval");
    try {
      const r = noGrad(() => withScratch(() => o.evaluate!(o.model)));
      return r instanceof Promise ? await r : r;
    } finally {
      done?.();
    }
  };
  const append = (line: object) => {
    try {
      appendFileSync(logPath, `${JSON.stringify(line)}\n`);
    } catch (e) {
      throw fsError("append to", logPath, e);
    }
  };
  if (pending) {
    // A checkpoint written before its step's evaluation, whose step the log lacks: the run
    // stopped during that evaluation (a signal, a kill). Its line is logged now, evaluated again.
    let line: Record<string, unknown> = pending;
    if (evaluateAt(pending.step)) {
      o.onNote?.(
        `the evaluation of step ${pending.step} was interrupted before it was logged: it runs again`,
      );
      const ev = await evaluate();
      line = { ...pending, eval: ev };
      lastEval = ev;
    }
    last = line as { loss: number };
    append(line);
  }
  /** Log step `m` (evaluating and checkpointing where due): every step, in order. */
  const report = async (m: StepMetrics) => {
    last = m;
    const evaluateNow = evaluateAt(m.step);
    const checkpointNow = checkpointAt(m.step);
    if (evaluateNow || checkpointNow) await trainer.sync();
    let ev: EvalRecord | undefined;
    if (evaluateNow && o.evaluate) {
      // The checkpoint first, keeping the step's line: an evaluation stopped by a signal (or the
      // process killed in it) loses no step; a resume logs the line, evaluating it again.
      if (checkpointNow) {
        saveTrainingCheckpoint(o.runDir, o.model, trainer.getState(), { ...m });
        saved = m.step;
      }
      try {
        ev = await evaluate();
      } catch (e) {
        if (!o.signal?.aborted) throw e;
        const ck =
          saved === m.step
            ? join(o.runDir, "checkpoints", stepDirName(m.step))
            : saveTrainingCheckpoint(o.runDir, o.model, trainer.getState(), { ...m });
        throw new RunInterrupted(o.runDir, m.step, ck);
      }
      lastEval = ev;
    }
    append(ev ? { ...m, eval: ev } : m);
    if (checkpointNow && saved !== m.step) {
      saveTrainingCheckpoint(o.runDir, o.model, trainer.getState());
      saved = m.step;
    }
    await o.onStep?.(ev ? { ...m, eval: ev } : m);
  };
  while (!trainer.done) {
    if (o.signal?.aborted) {
      // The step in flight (a pipelined engine's) is finished and logged first.
      for (const m of await trainer.drain()) await report(m);
      if (saved !== trainer.step) await trainer.sync();
      const ck =
        saved === trainer.step
          ? join(o.runDir, "checkpoints", stepDirName(saved))
          : saveTrainingCheckpoint(o.runDir, o.model, trainer.getState());
      throw new RunInterrupted(o.runDir, trainer.step, ck);
    }
    // The next step may be queued while this one runs unless this one's weights are needed
    // (a checkpoint or an evaluation after it; the last step is always one).
    const s = trainer.step + 1;
    const done = o.spans?.("step");
    let m: StepMetrics;
    try {
      m = await trainer.nextStep({ ahead: !evaluateAt(s) && !checkpointAt(s) });
    } finally {
      done?.();
    }
    await report(m);
    // Let signal handlers (and anything else waiting) run between steps.
    await nextTick();
  }
  // A step can be in flight only before a step that is not the last: never here.
  saveCheckpoint(finalDir, o.model, { stage: o.train.stage, steps: String(trainer.step) });
  return { steps: trainer.step, lastLoss: last?.loss ?? Number.NaN, lastEval, finalDir };
}
