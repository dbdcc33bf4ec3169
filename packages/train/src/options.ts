/*
 * Training options with defaults and validation (each error names the option).
 */
import type { Checkpointing } from "@loop/looped";
import { type AdamWOptions, PRECISIONS, type Precision } from "@loop/tensor";

/** A training stage: pre-training, exit-gate stage 1 (joint) or stage 2 (gate only). */
export type Stage = "pretrain" | "gate1" | "gate2";
/** The training stages, in pipeline order. */
export const STAGES: readonly Stage[] = ["pretrain", "gate1", "gate2"];

/**
 * The learning rate of the shared (looped) block — its layers, and norm_f with loop_norm: "full"
 * (the schedule's lr, like every other parameter) or "per-loop" (lr/R, R the model's loop count:
 * the block's gradient sums R uses of each weight).
 */
export type BlockLr = "full" | "per-loop";
/** The shared block's learning-rate modes: the same for all, or divided per loop step. */
export const BLOCK_LRS: readonly BlockLr[] = ["full", "per-loop"];

/**
 * Every training option (schedule, batch, optimiser, clipping, stage, seed, precision), all set;
 * `resolveTrainOptions` fills and checks them.
 */
export interface TrainOptions {
  stage: Stage;
  /** Optimizer steps. */
  steps: number;
  /**
   * Steps the warmup-cosine schedule spans (absent: `steps`). A resumed run extended past its
   * planned length keeps its schedule: the extra steps run at `minLr`.
   */
  scheduleSteps?: number;
  /** Rows per micro-batch. */
  batchSize: number;
  /** Micro-batches per optimizer step (gradient accumulation). */
  gradAccum: number;
  lr: number;
  minLr: number;
  warmupSteps: number;
  weightDecay: number;
  beta1: number;
  beta2: number;
  /** Global gradient-norm clip (0 = off). */
  clip: number;
  /** Evaluate every k steps (0 = only at the end). */
  evalEvery: number;
  /** Save a checkpoint every k steps (0 = only at the end). */
  checkpointEvery: number;
  /** Seed of the training data stream. */
  seed: number;
  /**
   * Recompute activations in the backward pass (less memory, ~1 extra forward): each loop step's
   * (true, "step") or each layer application's ("layer"); false keeps them all.
   */
  checkpointing: Checkpointing;
  /** Stage-1 entropy weight β. */
  beta: number;
  /** Stage-2 label sharpness k and threshold γ. */
  k: number;
  gamma: number;
  /** The shared block's learning rate (BlockLr). */
  blockLr: BlockLr;
  /**
   * Precision of the matrix products (@loop/tensor's Precision; "mixed" trains with a dynamic
   * loss scale). Absent means "fp32" (the default, so fp32 runs record nothing new and older run
   * records read the same). Which a backend offers is the backend's to say.
   */
  precision?: Precision;
}

/** The default training options. */
export const DEFAULT_TRAIN: TrainOptions = {
  stage: "pretrain",
  steps: 1000,
  batchSize: 32,
  gradAccum: 1,
  lr: 3e-3,
  minLr: 3e-4,
  warmupSteps: 50,
  weightDecay: 0.1,
  beta1: 0.9,
  beta2: 0.95,
  clip: 1,
  evalEvery: 100,
  checkpointEvery: 100,
  seed: 1,
  checkpointing: false,
  beta: 0.05,
  k: 50,
  gamma: 0.005,
  blockLr: "full",
};

function check(cond: boolean, msg: string): void {
  if (!cond) throw new Error(`train: ${msg}`);
}

/**
 * `input` over the defaults, checked: a bad value throws one error naming the option and what it
 * must be.
 */
export function resolveTrainOptions(input: Partial<TrainOptions> = {}): TrainOptions {
  const o: TrainOptions = { ...DEFAULT_TRAIN, ...input };
  const int = (k: keyof TrainOptions, min: number) => {
    const v = o[k] as number;
    check(Number.isInteger(v) && v >= min, `${k} must be an integer ≥ ${min}, got ${v}`);
  };
  const oneOf = (k: "stage" | "blockLr" | "precision", allowed: readonly string[]) =>
    check(
      allowed.includes(o[k] as string),
      `${k} must be one of ${allowed.join(", ")}, got ${JSON.stringify(o[k])}`,
    );
  oneOf("stage", STAGES);
  int("steps", 1);
  if (o.scheduleSteps !== undefined) {
    int("scheduleSteps", 1);
    check(
      o.scheduleSteps <= o.steps,
      `scheduleSteps must be ≤ steps (${o.steps}), got ${o.scheduleSteps}`,
    );
  }
  int("batchSize", 1);
  int("gradAccum", 1);
  int("warmupSteps", 0);
  int("evalEvery", 0);
  int("checkpointEvery", 0);
  int("seed", 0);
  check(o.lr > 0 && Number.isFinite(o.lr), `lr must be > 0, got ${o.lr}`);
  check(o.minLr >= 0 && o.minLr <= o.lr, `minLr must be in [0, lr], got ${o.minLr}`);
  check(
    o.weightDecay >= 0 && Number.isFinite(o.weightDecay),
    `weightDecay must be ≥ 0, got ${o.weightDecay}`,
  );
  check(o.beta1 >= 0 && o.beta1 < 1, `beta1 must be in [0, 1), got ${o.beta1}`);
  check(o.beta2 >= 0 && o.beta2 < 1, `beta2 must be in [0, 1), got ${o.beta2}`);
  check(o.clip >= 0, `clip must be ≥ 0, got ${o.clip}`);
  check(o.beta >= 0, `beta must be ≥ 0, got ${o.beta}`);
  check(o.k > 0, `k must be > 0, got ${o.k}`);
  oneOf("blockLr", BLOCK_LRS);
  if (o.precision !== undefined) oneOf("precision", PRECISIONS);
  return o;
}

/**
 * Words on valid options that are probably not meant, one line each (none: an empty list): a
 * warmup at least as long as the learning-rate schedule, where every step warms up and the
 * rate never decays (`warmupSteps` is an absolute count, 50 by default, so a short run is all
 * warmup unless it sets its own).
 */
export function trainWarnings(
  o: Pick<TrainOptions, "steps" | "warmupSteps" | "scheduleSteps">,
): string[] {
  const total = o.scheduleSteps ?? o.steps;
  if (o.warmupSteps === 0 || o.warmupSteps < total) return [];
  return [
    `warmupSteps (${o.warmupSteps}) is not below the schedule's ${total} steps: every step warms up and the learning rate never decays; choose fewer warmup steps`,
  ];
}

/** The optimizer's options of a run (every backend's AdamW takes these). */
export function adamwOptions(o: TrainOptions): AdamWOptions {
  return { lr: o.lr, beta1: o.beta1, beta2: o.beta2, weightDecay: o.weightDecay };
}
