/*
 * Everything the code above a compute backend uses (docs/backends.md): the backend's kernels and
 * transfers (`ModelOps`, `TrainOps`: what a backend implements) and autograd (`AutogradOps`:
 * written once in this package, `deviceAutograd` for a device's tensors), over its own tensor
 * types T (float) and I (int).
 */
import type { AutogradOps } from "./autograd-ops.js";
import type { ModelOps } from "./model-ops.js";
import type { TrainOps } from "./train-ops.js";

/** What a backend implements: its kernels, transfers and optimiser kernels (≤ 30 members). */
export type KernelOps<T, I> = ModelOps<T, I> & TrainOps<T, I>;

/** Everything the model and the trainer use of a backend: its kernels and autograd. */
export type BackendOps<T, I> = KernelOps<T, I> & AutogradOps<T>;

/**
 * What one training step uses of a backend (@loop/train's step engine, `AdamWCore`,
 * `clipGradients`): the training ops, autograd, and the two kernels that keep each loss and
 * join them with the norm for the step's one read-back.
 */
export type StepOps<T, I> = TrainOps<T, I> &
  AutogradOps<T> &
  Pick<ModelOps<T, I>, "affine" | "concat">;
