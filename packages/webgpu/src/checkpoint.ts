/*
 * Activation checkpointing on the GPU: the GPU tape's `checkpoint` (@loop/tensor's
 * `DeviceTape`): `fn(x)` runs without recording, its intermediates go back to the pool at once,
 * and the backward recomputes it on a view of x and walks back through that copy.
 */
import { GpuTensor } from "./gpu-tensor.js";
import { gpuTape } from "./tape.js";

/** Whether a walk inside a checkpoint frees as it goes (set by the outer walk's option). */
let releaseInside = true;

/** Run `fn` with the checkpoints' inner backward walks freeing (or not) as they go. */
export function withCheckpointRelease<R>(on: boolean, fn: () => R): R {
  const was = releaseInside;
  releaseInside = on;
  try {
    return fn();
  } finally {
    releaseInside = was;
  }
}

/**
 * Activation checkpointing on the GPU tape: fn(x) recorded without its activations and recomputed
 * in the backward pass.
 */
export function gpuCheckpoint(
  fn: (x: GpuTensor) => GpuTensor,
  x: GpuTensor,
  params: readonly GpuTensor[],
): GpuTensor {
  const standIn = (x: GpuTensor) => new GpuTensor(x.ctx, x.shape, { viewOf: x });
  // (read when the backward runs: the outer walk's setting)
  const walk = {
    get releaseGrads() {
      return releaseInside;
    },
    get releaseOutputs() {
      return releaseInside;
    },
  };
  return gpuTape.checkpoint(fn, x, params, standIn, walk);
}
