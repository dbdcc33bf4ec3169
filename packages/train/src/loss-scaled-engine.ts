/*
 * `deviceStepEngine` with dynamic loss scaling (loss-scale.ts), for mixed-precision training:
 * the same engine over the device's ops with two of them wrapped — `backward` seeds the scaled
 * weight, `gradNorm` first divides the gradients by the scale (the backend's `scaleGrads` op: 1/scale,
 * exact) — and a step whose gradients overflow is redone with half the scale.
 */
import type { StepOps } from "@loop/tensor";
import {
  type DeviceStepEngine,
  type DeviceTraining,
  deviceStepEngine,
} from "./device-step-engine.js";
import { DynamicLossScale, type LossScaleOptions } from "./loss-scale.js";
import type { TrainOptions } from "./options.js";
import type { StepResult } from "./step-engine.js";

/**
 * `lossScale` is the live scaler, for reports (its overflow count); `lossScaleState` /
 * `setLossScaleState` (the StepEngine hooks) are the part a checkpoint keeps.
 */
export type LossScaledEngine = DeviceStepEngine & { readonly lossScale: DynamicLossScale };

/**
 * A `StepEngine` for mixed precision: the device step with the loss multiplied by a dynamic scale,
 * gradients unscaled before clipping, and an overflowed step redone at half the scale.
 */
export function lossScaledStepEngine<T, I>(
  dev: DeviceTraining<T, I>,
  o: TrainOptions,
  scaleOpts: Partial<LossScaleOptions> = {},
): LossScaledEngine {
  const inner = dev.ops;
  const unscale = inner.scaleGrads;
  if (!unscale)
    throw new Error(
      `${dev.name}: loss scaling needs the backend's scaleGrads op (mixed precision)`,
    );
  const scaler = new DynamicLossScale(scaleOpts);
  const ops: StepOps<T, I> = {
    ...inner,
    backward: (loss, weight) => inner.backward(loss, weight * scaler.scale),
    gradNorm: (params) => {
      unscale(params, 1 / scaler.scale);
      return inner.gradNorm(params);
    },
  };
  const engine = deviceStepEngine<T, I>(
    {
      name: dev.name,
      ops,
      parameters: dev.parameters,
      stageLoss: (t, y, s) => dev.stageLoss(t, y, s),
      pullWeights: () => dev.pullWeights(),
      pushWeights: () => dev.pushWeights(),
      dispose: () => dev.dispose?.(),
    },
    o,
  );
  return {
    ...engine,
    lossScale: scaler,
    lossScaleState: () => scaler.state(),
    setLossScaleState: (s) => scaler.restore(s),
    async step(batches, lr): Promise<StepResult> {
      for (;;) {
        const r = await engine.step(batches, lr);
        // A finite loss with non-finite gradients: the scaled gradients overflowed (the engine
        // skipped the update). A non-finite loss is the model's own and is reported.
        if (Number.isFinite(r.loss) && !Number.isFinite(r.gradNorm)) {
          if (scaler.overflow()) continue;
          return r;
        }
        if (Number.isFinite(r.loss)) scaler.finite();
        return r;
      }
    },
  };
}
