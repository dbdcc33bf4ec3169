/*
 * Shared by `looplm train`, `sweep` and the default experiment: build the model (fresh, or from
 * a previous stage's checkpoint), train it in a run folder with a progress display and periodic
 * evaluation, and return the result.
 */

import { join } from "node:path";
import {
  evalRecord,
  evaluateAccuracy,
  evaluatePerplexity,
  type StepOutputSource,
} from "@loop/eval";
import { LoopedModel, type ModelConfig, withExitGate } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { checkTaskVocab, type Task, taskEvalBatches } from "@loop/tasks";
import type { CpuKernels } from "@loop/tensor/kernel";
import { writeFileAtomic } from "@loop/tensor/node";
import { deviceTraining, type TrainOptions } from "@loop/train";
import { type EvalRecord, progressReporter, type RunResult, runTraining } from "@loop/train/node";
import { type ComputeBackend, checkPrecision } from "../backend.js";
import { deviceEngine } from "../device-engine.js";
import { deviceOutputSource } from "../device-eval.js";
import { CliError } from "./errors.js";
import { withEvalProgress } from "./eval-progress.js";
import { interruptibleSpans } from "./interrupt.js";
import {
  checkMemoryNeed,
  isAllocationFailure,
  memoryNeedLine,
  trainingMemoryNeed,
} from "./memory-need.js";
import { cliNote } from "./note.js";
import { withFlagHint } from "./options/train.js";
import { writeTaskRecord } from "./task-record.js";

export interface TrainJob {
  runDir: string;
  task: Task;
  taskInfo: Record<string, unknown>;
  /** Fresh model config, or null with `from`. */
  config: ModelConfig | null;
  /** Continue from this checkpoint folder (previous stage). */
  from?: string;
  train: TrainOptions;
  evalCount: number;
  /** Where the steps run (its device when it has one). */
  backend: ComputeBackend;
  resume: boolean;
  /** Replace a run already in `runDir`. */
  overwrite?: boolean;
  /** Stops training after the current step, with a checkpoint (SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** Extra run.json fields (the flags a resume reuses). */
  info?: Record<string, unknown>;
  label: string;
  /** Called after every step, beside the progress display (a queue worker's progress). */
  onStep?: (m: { step: number; loss: number }) => void | Promise<void>;
}

/**
 * The evaluation used during training: per-step accuracy or perplexity on the fixed eval set, of
 * the model being trained on `kernels` (its backend's) or, on webgpu, of the outputs of its
 * device copy (`source`). The set's batches are made again as each evaluation reads them (the
 * same rows every time: the set is a pure function of its seed), so an --eval-count of any size
 * holds one batch; a long evaluation says how far it has got on stderr (`progress`, its label).
 */
export function taskEvaluator(
  task: Task,
  count: number,
  batchSize: number,
  kernels: CpuKernels,
  source?: StepOutputSource,
  progress?: string,
  signal?: AbortSignal,
): (m: LoopedModel) => Promise<EvalRecord> {
  const set = taskEvalBatches(task, { count, batchSize });
  // (with a signal: the event loop runs between two batches, so a SIGINT/SIGTERM is heard there
  // and stops the evaluation, instead of killing the process with no word and its lock left)
  const between = signal
    ? async () => {
        await new Promise<void>((r) => setImmediate(r));
        if (signal.aborted) throw new Error("evaluation stopped by a signal");
      }
    : undefined;
  return async (m) => {
    const batches = progress === undefined ? set : withEvalProgress(set, progress);
    return evalRecord(
      task.metric === "ppl"
        ? await evaluatePerplexity(source ?? m, batches, { kernels, between })
        : await evaluateAccuracy(source ?? m, batches, { kernels, between }),
    );
  };
}

/** The fewest rows per forward of the evaluation during training (fewer would waste time). */
const MIN_EVAL_BATCH = 64;

/** Rows per forward of the evaluation during training: --batch, and at least MIN_EVAL_BATCH. */
function evalBatchSize(train: Pick<TrainOptions, "batchSize">): number {
  return Math.max(train.batchSize, MIN_EVAL_BATCH);
}

/**
 * The flags that set the evaluation's share, for the memory message: its rows are --eval-count;
 * its batch is --batch only above MIN_EVAL_BATCH — below, a smaller --batch leaves the batch at
 * MIN_EVAL_BATCH rows and only a smaller --eval-count makes it smaller.
 */
function evalFlags(train: Pick<TrainOptions, "batchSize">): { count: string; evalBatch: string } {
  return {
    count: "--eval-count",
    evalBatch: train.batchSize > MIN_EVAL_BATCH ? "--batch" : "--eval-count",
  };
}

function modelFor(job: TrainJob): LoopedModel {
  if (!job.from) return new LoopedModel(job.config!, { seed: job.train.seed });
  const base = loadCheckpoint(job.from, { onNote: cliNote });
  return job.train.stage === "pretrain" ? base : withExitGate(base, { seed: job.train.seed });
}

export async function trainJob(job: TrainJob): Promise<RunResult & { model: LoopedModel }> {
  const seqLen = job.task.seqLen;
  checkPrecision(job.backend, job.train.precision ?? "fp32");
  // A setting no machine holds is refused before its model or its folder is made.
  const evaluation = { count: job.evalCount, batchSize: evalBatchSize(job.train) };
  const need = (cfg: ModelConfig) => trainingMemoryNeed(cfg, job.train, seqLen, evaluation);
  const flags = evalFlags(job.train);
  if (job.config) checkMemoryNeed(need(job.config), undefined, flags);
  let model: LoopedModel;
  try {
    model = modelFor(job);
  } catch (e) {
    if (job.config && isAllocationFailure(e))
      throw new CliError(
        `out of memory making the model: ${memoryNeedLine(need(job.config), flags)}`,
      );
    throw e;
  }
  if (!job.config) checkMemoryNeed(need(model.config), undefined, flags);
  try {
    return await trainModel(job, model);
  } catch (e) {
    if (!isAllocationFailure(e)) throw e;
    throw new CliError(
      `out of memory while training (${(e as Error).message}): ${memoryNeedLine(need(model.config), flags)}`,
    );
  }
}

async function trainModel(
  job: TrainJob,
  model: LoopedModel,
): Promise<RunResult & { model: LoopedModel }> {
  checkTaskVocab(job.task, model.config.vocab_size);
  const bar = progressReporter({ total: job.train.steps, label: job.label });
  // with device memory the steps run on the device's own copy of the model (@loop/train's
  // deviceTraining), on the backend's ops at --precision
  const dev =
    job.backend.caps.memory === "device"
      ? deviceTraining(model, job.backend.opsAt(job.train.precision ?? "fp32"), job.train)
      : undefined;
  const engine = dev ? deviceEngine(dev, job.train) : undefined;
  const evalBatch = evalBatchSize(job.train);
  try {
    const res = await runTraining({
      runDir: job.runDir,
      model,
      task: job.task,
      train: job.train,
      resume: job.resume,
      overwrite: job.overwrite,
      signal: job.signal,
      spans: interruptibleSpans(),
      // On a device the steps run there; evaluation and checkpoints read the weights back.
      // On a CPU backend they run on its kernels, whatever else this process runs on.
      engine,
      kernels: job.backend.kernels,
      evaluate: taskEvaluator(
        job.task,
        job.evalCount,
        evalBatch,
        job.backend.kernels,
        dev ? deviceOutputSource(dev.deviceModel) : undefined,
        `${job.label} evaluation`,
        job.signal,
      ),
      onStep: (m) => {
        bar.update(m);
        return job.onStep?.(m);
      },
      onNote: (line) => process.stderr.write(`looplm: ${withFlagHint(line)}\n`),
      info: {
        task: job.taskInfo,
        from: job.from ?? null,
        eval_count: job.evalCount,
        // what computed it (the latest session's, for a resumed run)
        backend: job.backend.name,
        ...job.info,
      },
    });
    saveVocabulary(job.task, [job.runDir, res.finalDir]);
    writeTaskRecord([job.runDir, res.finalDir], job.task, job.taskInfo);
    return { ...res, model };
  } finally {
    engine?.dispose();
    bar.stop();
  }
}

/**
 * Keep what maps token ids back to text beside the weights: vocab.json (the symbols, any task)
 * and, for language modelling, the tokenizer.json the run trained or loaded.
 */
export function saveVocabulary(task: Task, dirs: readonly string[]): void {
  const tok = task.tokenizer;
  for (const d of dirs) {
    writeFileAtomic(join(d, "vocab.json"), `${JSON.stringify(task.vocab.symbols)}\n`);
    if (tok) writeFileAtomic(join(d, "tokenizer.json"), `${JSON.stringify(tok.toJSON())}\n`);
  }
}
