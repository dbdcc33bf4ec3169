/**
 * The webgpu backend's training step: @loop/train's generic `deviceStepEngine` over the model
 * uploaded to the device (`deviceTraining` with the GPU's ops: its parameters, the stage loss on
 * the device, the weight copies). `gpuModel` is that copy, for evaluating on the device during
 * training.
 */
import type { DeviceModel, LoopedModel } from "@loop/looped";
import {
  type DeviceStepEngine,
  deviceStepEngine,
  deviceTraining,
  type TrainOptions,
} from "@loop/train";
import { type GpuContext, type GpuTensor, gpuBackendOps } from "@loop/webgpu";

export function gpuStepEngine(
  ctx: GpuContext,
  model: LoopedModel,
  o: TrainOptions,
): DeviceStepEngine & { gpuModel: DeviceModel<GpuTensor, GpuTensor> } {
  const dev = deviceTraining(model, gpuBackendOps(ctx), o);
  return Object.assign(deviceStepEngine(dev, o), { gpuModel: dev.deviceModel });
}
