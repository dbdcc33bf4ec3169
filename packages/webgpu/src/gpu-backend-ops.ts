/*
 * The WebGPU backend's whole op set on one device: the model's ops (with the decode kernels),
 * the training step's and activation checkpointing.
 */
import type { BackendOps, DecodeOps } from "@loop/tensor";
import { gpuCheckpoint } from "./checkpoint.js";
import type { GpuContext } from "./gpu-context.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { type GpuTrainOptions, gpuTrainOps } from "./gpu-train-ops.js";
import { gpuModelOps } from "./model-ops.js";

/**
 * The WebGPU backend's ops on `ctx`: the model's `ModelOps` and the trainer's `TrainOps` on GPU
 * tensors, for `toDevice` and `deviceTraining`.
 */
export function gpuBackendOps(
  ctx: GpuContext,
  opts: GpuTrainOptions = {},
): BackendOps<GpuTensor, GpuTensor> & DecodeOps<GpuTensor, GpuTensor> {
  return { ...gpuModelOps(ctx), ...gpuTrainOps(ctx, opts), checkpoint: gpuCheckpoint };
}
