/*
 * A `LoopedModel` trained on a backend's own tensors: the model uploaded once (`toDevice`), the
 * stage's loss on the device (docs/exit-gate.md "Training: three stages": pretrain = CE of step
 * R; gate1 = L1; gate2 = L2) through the backend's ops, and the weight copies to and from the
 * CPU model — what `deviceStepEngine` needs, for any backend that implements `ModelOps` and
 * `TrainOps` (`gpuBackendOps(ctx)` on WebGPU).
 */

import { type StageKernels, stage1LossOn, stage2LossOn } from "@loop/exit-gate";
import { type DeviceModel, type LoopedModel, type StepOutputsOf, toDevice } from "@loop/looped";
import { type BackendOps, crossEntropyOn } from "@loop/tensor";
import { withBlockLr } from "./block-lr.js";
import type { DeviceTraining } from "./device-step-engine.js";
import type { TrainOptions } from "./options.js";

/** A model's forward on one micro-batch's tokens, and its gate, on a backend's ops. */
export interface StageModel<T> {
  forward(steps: "all" | "last"): Pick<StepOutputsOf<T>, "readouts" | "logits">;
  gateLogits(readouts: readonly T[]): T;
}

/**
 * The stage's loss of one micro-batch (a one-element tensor, recorded), written once for every
 * backend: the CPU trainer's `stageLoss` runs it on the CPU ops.
 */
export function deviceStageLoss<T, I>(
  ops: StageKernels<T, I>,
  m: StageModel<T>,
  o: Pick<TrainOptions, "stage" | "beta" | "k" | "gamma">,
  targets: I,
): T {
  if (o.stage === "pretrain") return crossEntropyOn(ops, m.forward("last").logits[0]!, targets);
  const fwd = m.forward("all");
  if (o.stage === "gate1")
    return stage1LossOn(ops, m.gateLogits(fwd.readouts), fwd.logits, targets, { beta: o.beta });
  const gate = { logits: (r: readonly T[]) => m.gateLogits(r) };
  return stage2LossOn(ops, gate, fwd.readouts, fwd.logits, targets, { k: o.k, gamma: o.gamma });
}

/** `model` uploaded through `ops`, as a `DeviceTraining` (plus `deviceModel`, to evaluate on). */
export function deviceTraining<T, I>(
  model: LoopedModel,
  ops: BackendOps<T, I>,
  o: TrainOptions,
): DeviceTraining<T, I> & { deviceModel: DeviceModel<T, I>; dispose(): void } {
  if (o.checkpointing && !ops.checkpoint)
    throw new Error(
      `${ops.name}: activation checkpointing (--checkpointing) is not implemented on this backend; train without it or on a CPU backend`,
    );
  const dm = toDevice(model, ops);
  return {
    name: ops.name,
    ops,
    parameters: withBlockLr(model, dm.parameters(), o.blockLr),
    stageLoss: (tokens, targets, seqIdx) => {
      const checkpointing = o.checkpointing ?? false;
      const forward = (steps: "all" | "last") =>
        dm.forward(tokens, { steps, seqIdx, checkpointing });
      return deviceStageLoss(ops, { forward, gateLogits: (r) => dm.gateLogits(r) }, o, targets);
    },
    pullWeights: () => dm.copyTo(model),
    pushWeights: () => dm.copyFrom(model),
    dispose: () => dm.dispose(),
    deviceModel: dm,
  };
}
