/**
 * The loss of each training stage (docs/exit-gate.md "Training: three stages"):
 *  - pretrain: final-loop cross-entropy (docs/model.md §1), every parameter but the gate trains;
 *  - gate1: L1 = Σ_r p(r)·ℓ(r) − β·H(p), backbone, head and gate jointly;
 *  - gate2: L2 (BCE against the ideal continuation label), only exit_gate.* trains.
 */
import { gateLogits, stage1Loss, stage2Loss } from "@loop/exit-gate";
import type { LoopedModel } from "@loop/looped";
import type { IntTensor, NamedParameter, Tensor } from "@loop/tensor";
import type { TrainOptions } from "./options.js";

/** The parameters a stage trains; all others get requiresGrad = false (no gradient computed). */
export function trainableParameters(
  model: LoopedModel,
  stage: TrainOptions["stage"],
): NamedParameter[] {
  const all = model.parameters();
  if (stage !== "pretrain" && !model.exitGate) {
    throw new Error(
      `train: stage ${stage} needs a model with an exit gate (config exit_gate: true)`,
    );
  }
  const isGate = (n: string) => n.startsWith("exit_gate.");
  const chosen =
    stage === "gate2"
      ? all.filter((p) => isGate(p.name))
      : stage === "pretrain"
        ? all.filter((p) => !isGate(p.name))
        : all;
  const keep = new Set(chosen.map((p) => p.tensor));
  for (const p of all) p.tensor.requiresGrad = keep.has(p.tensor);
  return chosen;
}

export function stageLoss(
  model: LoopedModel,
  tokens: IntTensor,
  targets: IntTensor,
  opts: TrainOptions,
  seqIdx: Int32Array | null = null,
): Tensor {
  if (opts.stage === "pretrain")
    return model.finalLoss(tokens, targets, { checkpointing: opts.checkpointing, seqIdx });
  const gate = model.exitGate!;
  const fwd = model.forward(tokens, { steps: "all", checkpointing: opts.checkpointing, seqIdx });
  const gl = { logits: (ro: readonly Tensor[]) => gateLogits(ro, gate.weight, gate.bias) };
  if (opts.stage === "gate1")
    return stage1Loss(gl.logits(fwd.readouts), fwd.logits, targets, { beta: opts.beta });
  return stage2Loss(gl, fwd.readouts, fwd.logits, targets, { k: opts.k, gamma: opts.gamma });
}
