/* Training flags → TrainOptions. */

import { CHECKPOINTING_MODES, type Checkpointing } from "@loop/looped";
import type { Precision } from "@loop/tensor";
import {
  BLOCK_LRS,
  type BlockLr,
  resolveTrainOptions,
  STAGES,
  type Stage,
  type TrainOptions,
} from "@loop/train";
import type { Command } from "commander";
import { CliError, choiceOption, floatFlag, intFlag } from "../errors.js";
import { precisionOption } from "./precision.js";

/** `--checkpointing <what>`'s value: "step" or "layer". */
const checkpointingMode = choiceOption("--checkpointing", CHECKPOINTING_MODES);

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
  checkpointing: false as Checkpointing,
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
const stage = choiceOption<Stage>("--stage", STAGES);

/**
 * The most micro-batches a step takes: each is a forward and a backward pass (a millisecond at
 * the very least), so a step of more than 2^16 runs for minutes to weeks between two log lines;
 * 2^31 − 1 ran in constant memory with no end and no output.
 */
export const MAX_ACCUM = {
  max: 2 ** 16,
  why: "each micro-batch is a forward and backward pass: a larger step would run for hours between two log lines",
};

export function addTrainOptions(cmd: Command): Command {
  return cmd
    .option("--stage <stage>", `training stage: ${STAGES.join(" | ")}`, stage, TRAIN_DEFAULTS.stage)
    .addOption(intFlag("--steps <n>", "optimizer steps", 1, TRAIN_DEFAULTS.steps))
    .addOption(intFlag("--batch <n>", "rows per micro-batch", 1, TRAIN_DEFAULTS.batch))
    .addOption(
      intFlag(
        "--accum <n>",
        "micro-batches per step (gradient accumulation)",
        1,
        TRAIN_DEFAULTS.accum,
        MAX_ACCUM,
      ),
    )
    .addOption(floatFlag("--lr <x>", "peak learning rate", TRAIN_DEFAULTS.lr))
    .option(
      "--block-lr <s>",
      "learning rate of the looped block: full | per-loop (lr/R)",
      blockLr,
      TRAIN_DEFAULTS.blockLr,
    )
    .addOption(floatFlag("--min-lr <x>", "final learning rate of the cosine (default lr/10)"))
    .addOption(intFlag("--warmup <n>", "warmup steps", 0, TRAIN_DEFAULTS.warmup))
    .addOption(floatFlag("--wd <x>", "AdamW weight decay", TRAIN_DEFAULTS.wd))
    .addOption(floatFlag("--clip <x>", "global gradient-norm clip (0 = off)", TRAIN_DEFAULTS.clip))
    .addOption(
      intFlag(
        "--eval-every <n>",
        "evaluate every n steps (0 = at the end only)",
        0,
        TRAIN_DEFAULTS.evalEvery,
      ),
    )
    .addOption(
      intFlag(
        "--eval-count <n>",
        "evaluation examples (windows for lm)",
        1,
        TRAIN_DEFAULTS.evalCount,
      ),
    )
    .addOption(
      intFlag(
        "--ckpt-every <n>",
        "checkpoint every n steps (0 = at the end only)",
        0,
        TRAIN_DEFAULTS.ckptEvery,
      ),
    )
    .addOption(intFlag("--seed <n>", "seed of weights and data", 0, TRAIN_DEFAULTS.seed))
    .addOption(precisionOption())
    .option(
      "--checkpointing [what]",
      "recompute activations in the backward pass (less memory, one more forward): each loop step (step, the bare flag's) or each layer application (layer: for a deep stack such as 24x1)",
      (v: string): Checkpointing => (v === "step" ? true : checkpointingMode(v)),
      false as Checkpointing,
    )
    .addOption(floatFlag("--beta <x>", "gate1: entropy weight β", TRAIN_DEFAULTS.beta))
    .addOption(floatFlag("--k <x>", "gate2: label sharpness k", TRAIN_DEFAULTS.k))
    .addOption(floatFlag("--gamma <x>", "gate2: improvement threshold γ", TRAIN_DEFAULTS.gamma));
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

/**
 * A library line that opens with a TrainOptions field ("warmupSteps (60) is not below …") with
 * the flag that sets it appended ("… (--warmup)"); any other line unchanged.
 */
export function withFlagHint(line: string): string {
  const field = /^([a-zA-Z]+) \(/.exec(line)?.[1];
  const flag = field === undefined ? undefined : FLAG_OF[field as keyof TrainOptions];
  return flag === undefined ? line : `${line} (${flag})`;
}

/** "weightDecay must be ≥ 0" → "--wd must be ≥ 0"; "[0, lr]" → "[0, --lr]". */
export function withFlagNames(message: string): string {
  return message
    .replace(/^train: /, "")
    .replace(/\b[a-zA-Z]+\b/g, (w) => FLAG_OF[w as keyof TrainOptions] ?? w);
}

/**
 * The line to print when `--warmup` is longer than `--steps`, else null. The run's warmup is cut
 * to its length (`buildTrainOptions`), so a short run with the default warmup of 50 steps still
 * reaches its peak rate on its last step; the cut changes the schedule, so it is said.
 */
export function warmupCutNote(
  command: "train" | "sweep",
  f: Pick<TrainFlags, "warmup" | "steps">,
): string | null {
  return f.warmup > f.steps
    ? `${command}: --warmup ${f.warmup} is longer than --steps ${f.steps}: the warmup is cut to ${f.steps} step${f.steps === 1 ? "" : "s"}`
    : null;
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
      // (cut to the run's length; warmupCutNote says so)
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
      // fp32, the default, stays absent from the options (and so from run.json): an fp32 run's
      // record has no precision field, like a record written without the flag
      ...(f.precision && f.precision !== "fp32" ? { precision: f.precision } : {}),
    });
  } catch (e) {
    throw new CliError(withFlagNames((e as Error).message));
  }
}
