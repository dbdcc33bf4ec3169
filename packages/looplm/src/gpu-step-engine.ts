/**
 * The webgpu backend's training step: @loop/train's generic `deviceStepEngine` over the GPU copy
 * of the model (`gpuTraining`: its parameters, the stage loss on the device, the weight copies).
 * `gpuModel` is that copy, for evaluating on the device during training.
 */
import type { LoopedModel } from "@loop/looped";
import { type DeviceStepEngine, deviceStepEngine, type TrainOptions } from "@loop/train";
import { type GpuContext, type GpuLoopedModel, gpuTraining } from "@loop/webgpu";

export function gpuStepEngine(
  ctx: GpuContext,
  model: LoopedModel,
  o: TrainOptions,
): DeviceStepEngine & { gpuModel: GpuLoopedModel } {
  const dev = gpuTraining(ctx, model, o);
  return Object.assign(deviceStepEngine(dev, o), { gpuModel: dev.gpuModel });
}
