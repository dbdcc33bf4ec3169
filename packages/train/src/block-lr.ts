/*
 * The shared block's learning rate (TrainOptions.blockLr): with "per-loop" every parameter of the
 * looped block — the N layers, and norm_f when loop_norm applies it at every step — trains at
 * lr/R. Embeddings, head and exit gate keep the schedule's lr. On every backend: the CPU Trainer
 * and `deviceTraining` set it on their parameters, which the optimiser (`AdamWCore`) reads.
 */
import { isBlockParameter, type ModelConfig } from "@loop/looped";
import type { BlockLr } from "./options.js";

/** `params` (the CPU model's or a device copy's, by §6 name) with the block's lrScale set. */
export function withBlockLr<P extends { name: string; lrScale?: number }>(
  model: { readonly config: Pick<ModelConfig, "n_loops" | "loop_norm"> },
  params: P[],
  blockLr: BlockLr,
): P[] {
  if (blockLr === "full") return params;
  const scale = 1 / model.config.n_loops;
  return params.map((p) => (isBlockParameter(model.config, p.name) ? { ...p, lrScale: scale } : p));
}
