/**
 * Training steps on the webgpu backend: @loop/train's `StepEngine` over `GpuTrainer`, for the
 * CLI (`looplm train --backend webgpu`) and the browser (the playground's model worker) alike. The GPU model is uploaded from the CPU model once; the weights and the AdamW
 * moments come back to the CPU only when a checkpoint is written or the model is evaluated.
 */
import { type DeviceModel, type LoopedModel, toDevice } from "@loop/looped";
import type { Batch } from "@loop/tasks";
import type { AdamWState } from "@loop/tensor";
import type { StepEngine, StepResult, TrainOptions } from "@loop/train";
import type { GpuContext } from "../gpu-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { gpuModelOps } from "../model-ops.js";
import { GpuTrainer } from "./gpu-trainer.js";

/**
 * The engine, its GPU model (`gpuModel`, for evaluating on the device) and `dispose` to release
 * its device memory when the run ends.
 */
export function gpuStepEngine(
  ctx: GpuContext,
  model: LoopedModel,
  o: TrainOptions,
): StepEngine & { gpuModel: DeviceModel<GpuTensor, GpuTensor>; dispose(): void } {
  if (o.checkpointing)
    throw new Error(
      "webgpu: activation checkpointing (--checkpointing) is not implemented on the GPU; train without it or on a CPU backend",
    );
  const gm = toDevice(model, gpuModelOps(ctx));
  const trainer = new GpuTrainer(ctx, gm, {
    stage: o.stage,
    lr: o.lr,
    beta1: o.beta1,
    beta2: o.beta2,
    weightDecay: o.weightDecay,
    clip: o.clip,
    beta: o.beta,
    k: o.k,
    gamma: o.gamma,
  });
  return {
    name: `webgpu (${ctx.adapterName})`,
    step: (batches: readonly Batch[], lr: number): Promise<StepResult> =>
      trainer.stepDetailed(batches, lr),
    async pull(): Promise<AdamWState> {
      await gm.copyTo(model);
      return trainer.getOptimizerState();
    },
    push(state: AdamWState | null): void {
      gm.copyFrom(model);
      trainer.setOptimizerState(state);
    },
    gpuModel: gm,
    dispose: () => {
      trainer.dispose();
      gm.dispose();
    },
  };
}
