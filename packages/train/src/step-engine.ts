/*
 * The seam through which a training step runs somewhere other than the CPU kernels (a GPU): the
 * `Trainer` keeps the step count, the learning-rate schedule and the data cursor; an engine does
 * forward, loss, backward, clipping and the AdamW update on its own copy of the weights and the
 * optimizer moments. The CPU model and the Trainer's `AdamW` hold the state at checkpoints:
 * `pull` copies it back before one is written (or the model is evaluated), `push` loads it after
 * a resume.
 */
import type { Batch } from "@loop/tasks";
import type { AdamWState } from "@loop/tensor";
import type { LossScaleState } from "./loss-scale.js";
import type { MicroBatches } from "./micro-batches.js";

/** One optimiser step's mean loss and gradient norm before clipping. */
export interface StepResult {
  /** Mean loss over the step's micro-batches. */
  loss: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
}

/**
 * What runs the Trainer's steps elsewhere (a GPU): one optimiser step at a time, and `sync` to
 * bring weights and moments back.
 */
export interface StepEngine {
  /** For messages and run.json ("webgpu: SwiftShader …"). */
  readonly name: string;
  /**
   * One optimizer step: each micro-batch's gradient weighted by 1/(their count), clipping,
   * AdamW at `lr`. When the loss or the gradient norm is not finite it resolves with it and
   * leaves the weights and moments untouched (the Trainer then stops); a pipelined engine
   * leaves them untouched by every step queued after it too. Micro-batches made on demand
   * (`MicroBatches`) are all made before `step` returns; running the step again asks for
   * micro-batch 0 again.
   */
  step(batches: readonly Batch[] | MicroBatches, lr: number): Promise<StepResult>;
  /**
   * True when `step` queues the whole step before it returns (its promise only waits for the
   * result): the next step may then be started before the previous one's promise resolves, and
   * the results come in order (one step in flight).
   */
  readonly pipelined?: boolean;
  /** Copy the engine's weights into the CPU model and return its optimizer state. */
  pull(): Promise<AdamWState>;
  /** Load the CPU model's weights and `state` (null: fresh moments) into the engine. */
  push(state: AdamWState | null): void;
  /** Mixed precision (loss-scaled-engine.ts): the loss scale's state, which checkpoints keep. */
  lossScaleState?(): LossScaleState;
  /** Continue with a checkpoint's loss scale. */
  setLossScaleState?(state: LossScaleState): void;
}
