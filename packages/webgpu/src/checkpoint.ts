/*
 * What activation checkpointing on the GPU tape (@loop/tensor's `DeviceTape.checkpoint`) asks
 * of this backend: the stand-in for the checkpointed input — a view of x's block with no node,
 * so the recomputation's walk ends there — and how each walk gives memory back. `fn(x)` runs
 * without recording, its intermediates go back to the pool at once, and the backward recomputes
 * it on the stand-in and walks back through that copy with the outer walk's release setting.
 */
import type { WalkOptions } from "@loop/tensor/kernel";
import { GpuTensor } from "./gpu-tensor.js";
import { gpuTape } from "./tape.js";

/** A view of x's block with no node (the recomputation's input). */
export const checkpointStandIn = (x: GpuTensor): GpuTensor =>
  new GpuTensor(x.ctx, x.shape, { viewOf: x });

/**
 * A walk that gives activations (a node's outputs once its backward is queued) and
 * intermediate gradients back as it goes, or keeps them to the end of the step.
 */
export function walkRelease(release: boolean): Omit<WalkOptions<GpuTensor>, "wrt" | "nodes"> {
  return { releaseGrads: release, releaseOutputs: release };
}

/**
 * Activation checkpointing on the GPU tape: fn(x) recorded without its activations and
 * recomputed in the backward pass, whose inner walk frees as it goes when `release` (the
 * backend's ops take it from `releaseInBackward`; this is the op tests' entry).
 */
export function gpuCheckpoint(
  fn: (x: GpuTensor) => GpuTensor,
  x: GpuTensor,
  params: readonly GpuTensor[],
  release = true,
): GpuTensor {
  return gpuTape.checkpoint(fn, x, params, checkpointStandIn, walkRelease(release));
}
