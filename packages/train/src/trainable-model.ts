/*
 * What `Trainer` needs of a model, so a model of one's own trains as a `LoopedModel` does: the
 * config's vocabulary size (checked against the task), R and loop_norm (the per-loop block
 * learning rate), every parameter by name (the optimiser's, and the stage's choice of them), the
 * forward on a micro-batch, and the exit gate for the gated stages. `LoopedModel` satisfies it.
 */
import type { Checkpointing } from "@loop/looped";
import type { IntTensor, NamedParameter, Tensor } from "@loop/tensor";

/** The forward's options a `Trainer` passes (the model may ignore `checkpointing`). */
export interface TrainForwardOptions {
  /** "last": logits of step R only (pretrain); "all": of every step (the gated stages). */
  steps: "all" | "last";
  /** Recompute each loop step's or layer's activations in the backward (TrainOptions.checkpointing). */
  checkpointing?: Checkpointing;
  /** Packed documents: [B·T] document index per position, or null. */
  seqIdx?: Int32Array | null;
}

/** A model `Trainer` can train (see the file's comment). */
export interface TrainableModel {
  readonly config: {
    readonly vocab_size: number;
    readonly n_loops: number;
    readonly loop_norm: boolean;
  };
  /** Every parameter with its name (docs/model.md §6 for a looped model), in a fixed order. */
  parameters(): NamedParameter[];
  /** tokens [B,T] → readout(r) [B,T,D] and logits(r) [B,T,V] of the kept loop steps. */
  forward(tokens: IntTensor, opts: TrainForwardOptions): { readouts: Tensor[]; logits: Tensor[] };
  /** The exit gate (gate logits [R,B,T] from R readouts), or null without one. */
  readonly exitGate: { logits(readouts: readonly Tensor[]): Tensor } | null;
}
