/**
 * A `LoopedModel` trained on a backend's own tensors: the model uploaded once (`toDevice`), the
 * stage's loss on the device (docs/exit-gate.md "Training: three stages": pretrain = CE of step
 * R; gate1 = L1; gate2 = L2) through the backend's ops, and the weight copies to and from the
 * CPU model — what `deviceStepEngine` needs, for any backend that implements `ModelOps` and
 * `TrainOps` (`gpuBackendOps(ctx)` on WebGPU).
 */
import { type DeviceModel, type LoopedModel, toDevice } from "@loop/looped";
import type { BackendOps } from "@loop/tensor";
import type { DeviceTraining } from "./device-step-engine.js";
import type { TrainOptions } from "./options.js";

/** The stage's loss of one micro-batch on `dm` (a one-element tensor, recorded). */
export function deviceStageLoss<T, I>(
  dm: DeviceModel<T, I>,
  o: Pick<TrainOptions, "stage" | "beta" | "k" | "gamma"> & { checkpointing?: boolean },
  tokens: I,
  targets: I,
  seqIdx: I | null,
): T {
  const ops = dm.ops;
  const checkpointing = o.checkpointing ?? false;
  if (o.stage === "pretrain") {
    const { logits } = dm.forward(tokens, { steps: "last", seqIdx, checkpointing });
    return ops.crossEntropy(logits[0]!, targets);
  }
  const fwd = dm.forward(tokens, { steps: "all", seqIdx, checkpointing });
  if (o.stage === "gate1")
    return ops.stage1Loss(dm.gateLogits(fwd.readouts), fwd.logits, targets, { beta: o.beta });
  const gate = { logits: (r: readonly T[]) => dm.gateLogits(r) };
  return ops.stage2Loss(gate, fwd.readouts, fwd.logits, targets, { k: o.k, gamma: o.gamma });
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
    parameters: dm.parameters(),
    stageLoss: (tokens, targets, seqIdx) => deviceStageLoss(dm, o, tokens, targets, seqIdx),
    pullWeights: () => dm.copyTo(model),
    pushWeights: () => dm.copyFrom(model),
    dispose: () => dm.dispose(),
    deviceModel: dm,
  };
}
