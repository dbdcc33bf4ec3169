/**
 * The GPU copy of a model as @loop/train's `deviceStepEngine` trains it: its parameters, the
 * stage's loss on the device (docs/exit-gate.md "Training: three stages": pretrain = CE of step
 * R; gate1 = L1; gate2 = L2) and the weight copies to and from the CPU model. This is the only
 * glue between the trainer and `GpuLoopedModel`: the step, the optimiser and the clipping are
 * the generic ones over `gpuTrainOps`.
 */
import type { LoopedModel } from "@loop/looped";
import type { GpuContext } from "./gpu-context.js";
import type { GpuTensor } from "./gpu-tensor.js";
import { type GpuNamedParameter, gpuTrainOps } from "./gpu-train-ops.js";
import { GpuLoopedModel } from "./model/gpu-looped-model.js";
import { crossEntropy } from "./ops/cross-entropy.js";
import { stage1Loss, stage2Loss } from "./ops/stage-losses.js";

/** The training options the stage loss reads (@loop/train's TrainOptions has them). */
export interface GpuStageOptions {
  stage: "pretrain" | "gate1" | "gate2";
  /** Stage-1 entropy weight β, stage-2 sharpness k and threshold γ (docs/exit-gate.md). */
  beta: number;
  k: number;
  gamma: number;
  checkpointing?: boolean;
}

/** `model` uploaded to `ctx`, as a `DeviceTraining` (plus `gpuModel`, to evaluate on it). */
export function gpuTraining(ctx: GpuContext, model: LoopedModel, o: GpuStageOptions) {
  if (o.checkpointing)
    throw new Error(
      "webgpu: activation checkpointing (--checkpointing) is not implemented on the GPU; train without it or on a CPU backend",
    );
  const gm = GpuLoopedModel.fromModel(ctx, model);
  const ops = gpuTrainOps(ctx);
  const stageLoss = (tokens: GpuTensor, targets: GpuTensor, seqIdx: GpuTensor | null) => {
    if (o.stage === "pretrain") {
      const { logits } = gm.forward(tokens, { steps: "last", seqIdx });
      return crossEntropy(logits[0]!, targets);
    }
    const fwd = gm.forward(tokens, { steps: "all", seqIdx });
    if (o.stage === "gate1")
      return stage1Loss(gm.gateLogits(fwd.readouts), fwd.logits, targets, { beta: o.beta });
    const gate = { logits: (r: readonly GpuTensor[]) => gm.gateLogits(r) };
    return stage2Loss(gate, fwd.readouts, fwd.logits, targets, { k: o.k, gamma: o.gamma });
  };
  return {
    name: ops.name,
    ops,
    parameters: gm.parameters() as readonly GpuNamedParameter[],
    stageLoss,
    pullWeights: () => gm.copyTo(model),
    pushWeights: () => gm.copyFrom(model),
    dispose: () => gm.dispose(),
    gpuModel: gm,
  };
}
