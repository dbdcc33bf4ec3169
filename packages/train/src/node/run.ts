/**
 * A training run in a folder: fresh or resumed (`resume: true` continues from the last
 * checkpoint and reproduces the uninterrupted run exactly), periodic evaluation and checkpoints,
 * metrics appended to log.jsonl, final weights in final/.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { LoopedModel } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";
import type { Task } from "@loop/tasks";
import { noGrad, withScratch } from "@loop/tensor";
import { writeFileAtomic } from "@loop/tensor/node";
import { freezeForStage } from "../objective.js";
import type { TrainOptions } from "../options.js";
import { type StepMetrics, Trainer } from "../trainer.js";
import {
  ensureDir,
  latestCheckpoint,
  loadTrainingCheckpoint,
  saveTrainingCheckpoint,
  writeJsonFile,
} from "./run-files.js";

export interface EvalRecord {
  metric: "accuracy" | "ppl";
  /** Metric of every loop step r = 1..R. */
  per_step: number[];
  /** The metric of step R (what pre-training optimises). */
  final: number;
  [extra: string]: unknown;
}

export interface RunOptions {
  runDir: string;
  model: LoopedModel;
  task: Task;
  train: TrainOptions;
  /** Continue from the run's last checkpoint (error if none). */
  resume?: boolean;
  /** Evaluate the model (called without gradient recording). */
  evaluate?: (model: LoopedModel) => EvalRecord;
  /** Called after every step (progress display). */
  onStep?: (m: StepMetrics & { eval?: EvalRecord }) => void;
  /** Extra fields for run.json (task options, etc.). */
  info?: Record<string, unknown>;
}

export interface RunResult {
  steps: number;
  lastLoss: number;
  lastEval: EvalRecord | null;
  finalDir: string;
}

function truncateLog(path: string, step: number): void {
  if (!existsSync(path)) return;
  const kept = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && (JSON.parse(l) as { step: number }).step <= step);
  writeFileAtomic(path, kept.map((l) => `${l}\n`).join(""));
}

export function runTraining(o: RunOptions): RunResult {
  ensureDir(o.runDir);
  const logPath = join(o.runDir, "log.jsonl");
  freezeForStage(o.model, o.train.stage);
  const trainer = new Trainer(o.model, o.task, o.train);
  if (o.resume) {
    const ck = latestCheckpoint(o.runDir);
    if (!ck) throw new Error(`--resume: no checkpoint in ${join(o.runDir, "checkpoints")}`);
    trainer.setState(loadTrainingCheckpoint(ck, o.model));
    truncateLog(logPath, trainer.step);
  } else {
    writeFileAtomic(logPath, "");
  }
  writeJsonFile(join(o.runDir, "run.json"), {
    ...o.info,
    model: o.model.config,
    train: o.train,
    seed: o.train.seed,
    stage: o.train.stage,
  });
  let last: StepMetrics | null = null;
  let lastEval: EvalRecord | null = null;
  const every = (k: number, s: number) => k > 0 && s % k === 0;
  while (!trainer.done) {
    const m = trainer.trainStep();
    last = m;
    const isLast = trainer.done;
    let ev: EvalRecord | undefined;
    if (o.evaluate && (every(o.train.evalEvery, m.step) || isLast)) {
      ev = noGrad(() => withScratch(() => o.evaluate!(o.model)));
      lastEval = ev;
    }
    appendFileSync(logPath, `${JSON.stringify(ev ? { ...m, eval: ev } : m)}\n`);
    if (every(o.train.checkpointEvery, m.step) || isLast)
      saveTrainingCheckpoint(o.runDir, o.model, trainer.getState());
    o.onStep?.(ev ? { ...m, eval: ev } : m);
  }
  const finalDir = join(o.runDir, "final");
  saveCheckpoint(finalDir, o.model, { stage: o.train.stage, steps: String(trainer.step) });
  return { steps: trainer.step, lastLoss: last?.loss ?? Number.NaN, lastEval, finalDir };
}
