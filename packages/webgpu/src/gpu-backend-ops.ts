/*
 * The WebGPU backend's whole op set on one device: its kernels (the model's, with the decode
 * kernels, and the optimiser's) and autograd, which is not the backend's code but
 * @loop/tensor's `deviceAutograd` over the GPU tape (gpu-autograd.ts).
 */
import type { BackendOps, DecodeOps } from "@loop/tensor";
import { type GpuTrainOptions, gpuAutograd } from "./gpu-autograd.js";
import type { GpuContext } from "./gpu-context.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { gpuTrainOps } from "./gpu-train-ops.js";
import { gpuModelOps } from "./model-ops.js";

/**
 * The WebGPU backend's ops on `ctx`: the kernels of `ModelOps` and `TrainOps` on GPU tensors
 * and `AutogradOps` (its gradients read by the optimiser kernels), for `toDevice` and
 * `deviceTraining`.
 */
export function gpuBackendOps(
  ctx: GpuContext,
  opts: GpuTrainOptions = {},
): BackendOps<GpuTensor, GpuTensor> & DecodeOps<GpuTensor, GpuTensor> {
  const autograd = gpuAutograd(ctx, opts);
  // (gradOf and takeGrad are the optimiser kernels' access, not members of the op set)
  const { gradOf: _gradOf, takeGrad: _takeGrad, ...autogradOps } = autograd;
  // (the model's transfers last: its uploadInt keeps the ids on the host for the decode kernels)
  return { ...gpuTrainOps(ctx, autograd), ...gpuModelOps(ctx), ...autogradOps };
}
