/*
 * The training step on a device backend: @loop/train's `deviceStepEngine` over `dev`, or with
 * `precision: "mixed"` (webgpu only: the context's GEMMs take f16 operands, precision.ts of
 * @loop/webgpu) the loss-scaled engine, which unscales the gradients on the device before the
 * norm. fp32 sets a webgpu context back to fp32. tf32 and bf16 (cuda) need no loss scale (their
 * range is fp32's): `dev` already runs on the backend's ops at that precision (opsAt).
 */
import {
  type DeviceStepEngine,
  type DeviceTraining,
  deviceStepEngine,
  lossScaledStepEngine,
  type TrainOptions,
} from "@loop/train";
import { type GpuContext, setGpuPrecision } from "@loop/webgpu";

export function deviceEngine<T, I>(
  gpu: GpuContext | null,
  dev: DeviceTraining<T, I>,
  o: TrainOptions,
): DeviceStepEngine {
  const precision = o.precision ?? "fp32";
  if (precision !== "mixed") {
    if (gpu) setGpuPrecision(gpu, "fp32");
    return deviceStepEngine(dev, o);
  }
  if (!gpu) throw new Error(`--precision ${precision} needs --backend webgpu`);
  setGpuPrecision(gpu, precision);
  return lossScaledStepEngine(dev, o);
}
