/**
 * The shared block's learning rate (TrainOptions.blockLr): with "per-loop" every parameter of the
 * looped block — the N layers, and norm_f when loop_norm applies it at every step — trains at
 * lr/R. Embeddings, head and exit gate keep the schedule's lr.
 */
import type { LoopedModel } from "@loop/looped";
import type { NamedParameter } from "@loop/tensor";
import type { BlockLr } from "./options.js";

/** Whether `name` is a parameter of the looped block of `model`. */
export function isBlockParameter(model: LoopedModel, name: string): boolean {
  return (
    name.startsWith("backbone.layers.") ||
    (model.config.loop_norm && name === "backbone.norm_f.weight")
  );
}

export function withBlockLr(
  model: LoopedModel,
  params: NamedParameter[],
  blockLr: BlockLr,
): NamedParameter[] {
  if (blockLr === "full") return params;
  const scale = 1 / model.config.n_loops;
  return params.map((p) => (isBlockParameter(model, p.name) ? { ...p, lrScale: scale } : p));
}
