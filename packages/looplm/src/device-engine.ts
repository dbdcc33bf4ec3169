/*
 * The training step on a device backend: @loop/train's `deviceStepEngine` over `dev`, or with
 * `precision: "mixed"` (webgpu only: the context's GEMMs take f16 operands, precision.ts of
 * @loop/webgpu) the loss-scaled engine, which unscales the gradients on the device before the
 * norm. fp32 sets the context back to fp32.
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
  if (gpu) setGpuPrecision(gpu, precision);
  if (precision === "fp32") return deviceStepEngine(dev, o);
  if (!gpu) throw new Error(`--precision ${precision} needs --backend webgpu`);
  return lossScaledStepEngine(dev, o);
}
