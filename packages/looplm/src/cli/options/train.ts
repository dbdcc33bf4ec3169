/** Training flags → TrainOptions. */
import { resolveTrainOptions, STAGES, type Stage, type TrainOptions } from "@loop/train";
import type { Command } from "commander";
import { CliError, floatOption, intOption } from "../errors.js";

export interface TrainFlags {
  stage: Stage;
  steps: number;
  batch: number;
  accum: number;
  lr: number;
  minLr?: number;
  warmup: number;
  wd: number;
  clip: number;
  evalEvery: number;
  evalCount: number;
  ckptEvery: number;
  seed: number;
  checkpointing: boolean;
  beta: number;
  k: number;
  gamma: number;
}

function stage(v: string): Stage {
  if (!(STAGES as readonly string[]).includes(v))
    throw new CliError(`--stage must be one of ${STAGES.join(", ")}, got "${v}"`);
  return v as Stage;
}

export function addTrainOptions(cmd: Command): Command {
  return cmd
    .option("--stage <stage>", `training stage: ${STAGES.join(" | ")}`, stage, "pretrain" as Stage)
    .option("--steps <n>", "optimizer steps", intOption("--steps", 1), 1000)
    .option("--batch <n>", "rows per micro-batch", intOption("--batch", 1), 32)
    .option(
      "--accum <n>",
      "micro-batches per step (gradient accumulation)",
      intOption("--accum", 1),
      1,
    )
    .option("--lr <x>", "peak learning rate", floatOption("--lr"), 3e-3)
    .option(
      "--min-lr <x>",
      "final learning rate of the cosine (default lr/10)",
      floatOption("--min-lr"),
    )
    .option("--warmup <n>", "warmup steps", intOption("--warmup", 0), 50)
    .option("--wd <x>", "AdamW weight decay", floatOption("--wd"), 0.1)
    .option("--clip <x>", "global gradient-norm clip (0 = off)", floatOption("--clip"), 1)
    .option(
      "--eval-every <n>",
      "evaluate every n steps (0 = at the end only)",
      intOption("--eval-every", 0),
      100,
    )
    .option(
      "--eval-count <n>",
      "evaluation examples (windows for lm)",
      intOption("--eval-count", 1),
      256,
    )
    .option(
      "--ckpt-every <n>",
      "checkpoint every n steps (0 = at the end only)",
      intOption("--ckpt-every", 0),
      100,
    )
    .option("--seed <n>", "seed of weights and data", intOption("--seed", 0), 1)
    .option("--checkpointing", "recompute loop steps in the backward pass (less memory)", false)
    .option("--beta <x>", "gate1: entropy weight β", floatOption("--beta"), 0.05)
    .option("--k <x>", "gate2: label sharpness k", floatOption("--k"), 50)
    .option("--gamma <x>", "gate2: improvement threshold γ", floatOption("--gamma"), 0.005);
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
    });
  } catch (e) {
    throw new CliError(withFlagNames((e as Error).message));
  }
}
