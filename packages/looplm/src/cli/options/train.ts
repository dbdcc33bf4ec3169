/** Training flags → TrainOptions. */
import {
  BLOCK_LRS,
  type BlockLr,
  PRECISIONS,
  type Precision,
  resolveTrainOptions,
  STAGES,
  type Stage,
  type TrainOptions,
} from "@loop/train";
import type { Command } from "commander";
import { CliError, choiceOption, floatOption, intOption } from "../errors.js";

/** The training flags' defaults (what `--help` shows), for callers that build options in code. */
export const TRAIN_DEFAULTS = {
  stage: "pretrain" as Stage,
  steps: 1000,
  batch: 32,
  accum: 1,
  lr: 3e-3,
  warmup: 50,
  wd: 0.1,
  clip: 1,
  evalEvery: 100,
  evalCount: 256,
  ckptEvery: 100,
  seed: 1,
  checkpointing: false,
  beta: 0.05,
  k: 50,
  gamma: 0.005,
  blockLr: "full" as BlockLr,
};

export type TrainFlags = typeof TRAIN_DEFAULTS & {
  minLr?: number;
  /** Absent: fp32 (no default value, so fp32 runs record no new flag). */
  precision?: Precision;
};

const blockLr = choiceOption<BlockLr>("--block-lr", BLOCK_LRS);
const precision = choiceOption<Precision>("--precision", PRECISIONS);
const stage = choiceOption<Stage>("--stage", STAGES);

export function addTrainOptions(cmd: Command): Command {
  return cmd
    .option("--stage <stage>", `training stage: ${STAGES.join(" | ")}`, stage, TRAIN_DEFAULTS.stage)
    .option("--steps <n>", "optimizer steps", intOption("--steps", 1), TRAIN_DEFAULTS.steps)
    .option("--batch <n>", "rows per micro-batch", intOption("--batch", 1), TRAIN_DEFAULTS.batch)
    .option(
      "--accum <n>",
      "micro-batches per step (gradient accumulation)",
      intOption("--accum", 1),
      TRAIN_DEFAULTS.accum,
    )
    .option("--lr <x>", "peak learning rate", floatOption("--lr"), TRAIN_DEFAULTS.lr)
    .option(
      "--block-lr <s>",
      "learning rate of the looped block: full | per-loop (lr/R)",
      blockLr,
      TRAIN_DEFAULTS.blockLr,
    )
    .option(
      "--min-lr <x>",
      "final learning rate of the cosine (default lr/10)",
      floatOption("--min-lr"),
    )
    .option("--warmup <n>", "warmup steps", intOption("--warmup", 0), TRAIN_DEFAULTS.warmup)
    .option("--wd <x>", "AdamW weight decay", floatOption("--wd"), TRAIN_DEFAULTS.wd)
    .option(
      "--clip <x>",
      "global gradient-norm clip (0 = off)",
      floatOption("--clip"),
      TRAIN_DEFAULTS.clip,
    )
    .option(
      "--eval-every <n>",
      "evaluate every n steps (0 = at the end only)",
      intOption("--eval-every", 0),
      TRAIN_DEFAULTS.evalEvery,
    )
    .option(
      "--eval-count <n>",
      "evaluation examples (windows for lm)",
      intOption("--eval-count", 1),
      TRAIN_DEFAULTS.evalCount,
    )
    .option(
      "--ckpt-every <n>",
      "checkpoint every n steps (0 = at the end only)",
      intOption("--ckpt-every", 0),
      TRAIN_DEFAULTS.ckptEvery,
    )
    .option("--seed <n>", "seed of weights and data", intOption("--seed", 0), TRAIN_DEFAULTS.seed)
    .option(
      "--precision <p>",
      "matrix products: fp32 | mixed (f16 operands, f32 accumulation and weights, loss scaling; --backend webgpu only) (default: fp32)",
      precision,
    )
    .option("--checkpointing", "recompute loop steps in the backward pass (less memory)", false)
    .option("--beta <x>", "gate1: entropy weight β", floatOption("--beta"), TRAIN_DEFAULTS.beta)
    .option("--k <x>", "gate2: label sharpness k", floatOption("--k"), TRAIN_DEFAULTS.k)
    .option(
      "--gamma <x>",
      "gate2: improvement threshold γ",
      floatOption("--gamma"),
      TRAIN_DEFAULTS.gamma,
    );
}

/** The flag of each TrainOptions field, so option errors name what the user typed. */
const FLAG_OF: Partial<Record<keyof TrainOptions, string>> = {
  stage: "--stage",
  steps: "--steps",
  batchSize: "--batch",
  gradAccum: "--accum",
  lr: "--lr",
  minLr: "--min-lr",
  warmupSteps: "--warmup",
  weightDecay: "--wd",
  clip: "--clip",
  evalEvery: "--eval-every",
  checkpointEvery: "--ckpt-every",
  seed: "--seed",
  beta: "--beta",
  k: "--k",
  gamma: "--gamma",
  blockLr: "--block-lr",
  precision: "--precision",
};

/** "weightDecay must be ≥ 0" → "--wd must be ≥ 0"; "[0, lr]" → "[0, --lr]". */
export function withFlagNames(message: string): string {
  return message
    .replace(/^train: /, "")
    .replace(/\b[a-zA-Z]+\b/g, (w) => FLAG_OF[w as keyof TrainOptions] ?? w);
}

export function buildTrainOptions(f: TrainFlags): TrainOptions {
  try {
    return resolveTrainOptions({
      stage: f.stage,
      steps: f.steps,
      batchSize: f.batch,
      gradAccum: f.accum,
      lr: f.lr,
      minLr: f.minLr ?? f.lr / 10,
      warmupSteps: Math.min(f.warmup, f.steps),
      weightDecay: f.wd,
      clip: f.clip,
      evalEvery: f.evalEvery,
      checkpointEvery: f.ckptEvery,
      seed: f.seed,
      checkpointing: f.checkpointing,
      beta: f.beta,
      k: f.k,
      gamma: f.gamma,
      // (absent from older flag records: the default)
      blockLr: f.blockLr ?? "full",
      // fp32 stays absent from the options (and so from run.json), as before the flag existed
      ...(f.precision && f.precision !== "fp32" ? { precision: f.precision } : {}),
    });
  } catch (e) {
    throw new CliError(withFlagNames((e as Error).message));
  }
}
