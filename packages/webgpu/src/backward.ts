/*
 * The GPU tape's walk called directly, for the op tests and benchmarks (the backend's autograd
 * is gpu-autograd.ts, @loop/tensor's `deviceAutograd` over the same tape): `backwardGpu(loss)`
 * walks @loop/tensor's `DeviceTape` (tape.ts) back from the loss. Leaves that require a gradient gather it in their
 * persistent `grad` (summed over every use, so weights shared by R loop steps get the sum of
 * their R contributions); intermediate gradients are transient, summed on the device, in place
 * when an op writes them into the running sum (`gradTarget`).
 *
 * With `release`, memory goes back to the context's pool as the walk consumes it: a node's
 * outputs once its own backward is queued (every consumer of them comes later in the forward,
 * so its backward was queued before; not one seen through a detached view, whose consumers are
 * not ordered after it), and each intermediate gradient once nothing refers to it. The GPU runs
 * queued work in order, so a buffer reused by a later kernel is only overwritten after the
 * kernels queued before have read it.
 */
import type { GpuTensor } from "./gpu-tensor.js";
import { fillTensor } from "./ops/elementwise-plain.js";
import { gpuTape } from "./tape.js";

export interface BackwardOptions {
  /** Free activations and intermediate gradients as the walk consumes them (see above). */
  release?: boolean;
  /**
   * Leaves (without a node) whose gradient is returned, as a transient tensor, instead of
   * accumulated into a persistent `grad` (activation checkpointing's recomputed input).
   */
  wrt?: readonly GpuTensor[];
}

/**
 * Backpropagate from `loss` (one element, or `seed` as its gradient). Leaf gradients accumulate
 * into `leaf.grad`; intermediate gradients are transient. Returns the gradients of `opts.wrt`.
 */
export function backwardGpu(
  loss: GpuTensor,
  seed?: GpuTensor,
  opts: BackwardOptions = {},
): (GpuTensor | null)[] {
  if (!loss.requiresGrad) throw new Error("webgpu: backward of a tensor that needs no gradient");
  if (!seed && loss.size !== 1)
    throw new Error(
      `webgpu: backward needs a one-element loss or a seed, got ${loss.size} elements`,
    );
  const release = opts.release ?? false;
  return gpuTape.backward(loss, seed ?? (() => fillTensor(loss.ctx, loss.shape, 1)), {
    wrt: opts.wrt,
    releaseGrads: release,
    releaseOutputs: release,
  });
}

/** Zero (drop) the gradients of `params` before the next step. */
export function zeroGpuGrads(params: readonly GpuTensor[]): void {
  gpuTape.zeroGrads(params, true);
}
