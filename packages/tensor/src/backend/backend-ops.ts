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
