/*
 * The loss of each training stage (docs/exit-gate.md "Training: three stages"):
 *  - pretrain: final-loop cross-entropy (docs/model.md §1), every parameter but the gate trains;
 *  - gate1: L1 = Σ_r p(r)·ℓ(r) − β·H(p), backbone, head and gate jointly;
 *  - gate2: L2 (BCE against the ideal continuation label), only exit_gate.* trains.
 */
import { cpuBackendOps } from "@loop/looped";
import type { IntTensor, NamedParameter, Tensor } from "@loop/tensor";
import { deviceStageLoss } from "./device-training.js";
import type { TrainOptions } from "./options.js";
import type { TrainableModel } from "./trainable-model.js";

const isGate = (p: { name: string }) => p.name.startsWith("exit_gate.");

/**
 * The parameters a stage trains, from every parameter of a model on any backend: pretrain all
 * but the exit gate, gate2 the gate only, gate1 all. A gated stage needs a gate.
 */
export function stageParameters<P extends { name: string }>(
  all: readonly P[],
  stage: TrainOptions["stage"],
): P[] {
  if (stage !== "pretrain" && !all.some(isGate))
    throw new Error(
      `train: stage ${stage} needs a model with an exit gate (config exit_gate: true)`,
    );
  if (stage === "gate2") return all.filter(isGate);
  if (stage === "pretrain") return all.filter((p) => !isGate(p));
  return [...all];
}

/** The parameters a stage trains (the model is not changed). */
export function trainableParameters(
  model: TrainableModel,
  stage: TrainOptions["stage"],
): NamedParameter[] {
  return stageParameters(model.parameters(), stage);
}

/**
 * Prepare the model for a stage: requiresGrad = true on the parameters the stage trains and
 * false on every other (so their gradients are never computed); returns the trained ones. A
 * `Trainer` needs its model prepared this way and checks it.
 */
export function freezeForStage(
  model: TrainableModel,
  stage: TrainOptions["stage"],
): NamedParameter[] {
  const chosen = trainableParameters(model, stage);
  const keep = new Set(chosen.map((p) => p.tensor));
  for (const p of model.parameters()) p.tensor.requiresGrad = keep.has(p.tensor);
  return chosen;
}

/** Throws, naming the first mismatch, unless the model's requiresGrad flags are the stage's. */
export function checkFrozenForStage(model: TrainableModel, stage: TrainOptions["stage"]): void {
  const keep = new Set(trainableParameters(model, stage).map((p) => p.tensor));
  for (const p of model.parameters()) {
    if (p.tensor.requiresGrad === keep.has(p.tensor)) continue;
    throw new Error(
      `train: stage ${stage} ${keep.has(p.tensor) ? "trains" : "does not train"} ${p.name}, but its requiresGrad is ${p.tensor.requiresGrad}; call freezeForStage(model, "${stage}") first`,
    );
  }
}

/** The stage's loss of one micro-batch on the CPU model (`deviceStageLoss` on the CPU ops). */
export function stageLoss(
  model: TrainableModel,
  tokens: IntTensor,
  targets: IntTensor,
  opts: TrainOptions,
  seqIdx: Int32Array | null = null,
): Tensor {
  const { checkpointing } = opts;
  const forward = (steps: "all" | "last") =>
    model.forward(tokens, { steps, checkpointing, seqIdx });
  const gateLogits = (r: readonly Tensor[]) => {
    if (!model.exitGate)
      throw new Error(`train: stage ${opts.stage} needs a model with an exit gate`);
    return model.exitGate.logits(r);
  };
  return deviceStageLoss(cpuBackendOps, { forward, gateLogits }, opts, targets);
}
