/** The WebGPU backend's whole op set on one device: the model's ops and the training step's. */
import type { BackendOps } from "@loop/tensor";
import type { GpuContext } from "./gpu-context.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { gpuTrainOps } from "./gpu-train-ops.js";
import { gpuModelOps } from "./model-ops.js";

export function gpuBackendOps(ctx: GpuContext): BackendOps<GpuTensor, GpuTensor> {
  return { ...gpuModelOps(ctx), ...gpuTrainOps(ctx) };
}
