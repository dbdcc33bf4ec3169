/**
 * The webgpu backend's training step: @loop/train's generic `deviceStepEngine` over the model
 * uploaded to the device (`deviceTraining` with the GPU's ops: its parameters, the stage loss on
 * the device, the weight copies). `gpuModel` is that copy, for evaluating on the device during
 * training. With `precision: "mixed"` the context's GEMMs take f16 operands (precision.ts of
 * @loop/webgpu) and the engine scales the loss (`lossScaledStepEngine`); fp32 sets the context
 * back to fp32.
 */
import type { DeviceModel, LoopedModel } from "@loop/looped";
import {
  type DeviceStepEngine,
  deviceStepEngine,
  deviceTraining,
  lossScaledStepEngine,
  type TrainOptions,
} from "@loop/train";
import {
  type GpuContext,
  type GpuTensor,
  gpuBackendOps,
  scaleGradients,
  setGpuPrecision,
} from "@loop/webgpu";

export function gpuStepEngine(
  ctx: GpuContext,
  model: LoopedModel,
  o: TrainOptions,
): DeviceStepEngine & { gpuModel: DeviceModel<GpuTensor, GpuTensor> } {
  const precision = o.precision ?? "fp32";
  const dev = deviceTraining(model, gpuBackendOps(ctx), o);
  setGpuPrecision(ctx, precision);
  const engine =
    precision === "mixed" ? lossScaledStepEngine(dev, o, scaleGradients) : deviceStepEngine(dev, o);
  return Object.assign(engine, { gpuModel: dev.deviceModel });
}
