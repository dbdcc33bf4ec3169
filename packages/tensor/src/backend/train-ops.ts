/*
 * What a backend provides so that one optimiser (`AdamWCore`), one clipping rule and one
 * training step (@loop/train's `deviceStepEngine`) run on its tensors. `T` is the backend's
 * float tensor, `I` its index tensor (token ids, targets; the same type where a tensor carries
 * its dtype). The CPU implements it in `cpuTrainOps`, the GPU in `@loop/webgpu`'s `gpuTrainOps`;
 * a new device backend implements these ops and the model's ops, nothing of the trainer.
 *
 * Nothing here reads back except `read`: an op only enqueues work on a device, so a whole step
 * (forward, backward, norm, clip, update) runs without a round trip, and the losses and the
 * gradient norm come back in one `read`.
 */
import type { TransferOps } from "./model-ops.js";

/** The transfers between the host and a backend's tensors (those of the model's ops). */
export type DeviceTransfers<T, I> = Pick<
  TransferOps<T, I>,
  "upload" | "uploadInt" | "read" | "shapeOf" | "releaseTransients" | "dispose"
>;

/** A trainable tensor with its name, whether weight decay applies and its learning-rate factor. */
export interface TrainParameter<T> {
  name: string;
  tensor: T;
  decay: boolean;
  /** Multiplies the learning rate of this parameter, weight decay included (absent: 1). */
  lrScale?: number;
}

/**
 * The per-parameter constants of one AdamW update, computed once on the host in double:
 *   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
 *   w ← w·decay − stepSize·m / (sqrt(v)·sc2 + eps)
 * with decay = 1 − lr·wd (or 1), stepSize = lr/(1−β1^t), sc2 = 1/sqrt(1−β2^t).
 */
export interface AdamWStepConstants {
  decay: number;
  stepSize: number;
  beta1: number;
  beta2: number;
  eps: number;
  sc2: number;
}

/**
 * What training needs of a backend beyond the model's kernels: the gradient norm, the AdamW
 * update, a step's report slots and transfers, on its own tensors (the backward walk and the
 * gradients' bookkeeping are `AutogradOps`, written once).
 */
export interface TrainOps<T, I = T> extends DeviceTransfers<T, I> {
  /** For messages and run.json ("webgpu (SwiftShader …)", "cpu"). */
  readonly name: string;
  /** sqrt(Σ g²) over the gradients of `params` (all holding one), as a one-element tensor. */
  gradNorm(params: readonly T[]): T;
  /** A persistent tensor of zeros (an optimiser moment). */
  zeros(shape: readonly number[]): T;
  /**
   * One AdamW update of `param` from its gradient, moments `m` and `v` updated in place; with a
   * `guard` (from `guardFinite`), only while guard[0] ≠ 0 (else nothing changes).
   */
  adamw(param: T, m: T, v: T, c: AdamWStepConstants, guard?: T): void;
  /**
   * Set guard[0] (a persistent one-element tensor, 1 at the start) to 0 when an element of
   * `values` is not finite; once 0 it stays 0. A device that implements it lets the step engine
   * condition the update on the step's losses and norm without reading them back first, so the
   * next step is queued while this one runs (one step in flight). Absent on the CPU, whose step
   * has nothing in flight.
   */
  guardFinite?(values: T, guard: T): void;
  /**
   * Start the work queued so far (a device submits it, so it runs while the host queues more:
   * the forward while the backward is encoded). Absent where work runs as it is queued.
   */
  flush?(): void;
  /**
   * g ← g·factor for every parameter's gradient, in place: the unscaling of loss-scaled
   * gradients under mixed precision (factor 1/scale, a power of two, so exact). Absent on a
   * backend that trains in fp32 only (the CPU).
   */
  scaleGrads?(params: readonly T[], factor: number): void;
}
