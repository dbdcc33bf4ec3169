/*
 * The training step on a device backend: @loop/train's `deviceStepEngine` over `dev`, or with
 * `precision: "mixed"` (f16 GEMM operands, whose range needs it) the loss-scaled engine, which
 * unscales the gradients on the device before the norm. `dev` already runs on the backend's ops
 * at the precision (`ComputeBackend.opsAt`); tf32 and bf16 need no loss scale (their range is
 * fp32's).
 */
import {
  type DeviceStepEngine,
  type DeviceTraining,
  deviceStepEngine,
  lossScaledStepEngine,
  type TrainOptions,
} from "@loop/train";

export function deviceEngine<T, I>(dev: DeviceTraining<T, I>, o: TrainOptions): DeviceStepEngine {
  return o.precision === "mixed" ? lossScaledStepEngine(dev, o) : deviceStepEngine(dev, o);
}
