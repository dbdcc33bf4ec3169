/*
 * Add an exit gate to a model trained without one (stage 1 after pre-training, exit-gate.md
 * "Training: three stages"): the same config with exit_gate true, every backbone and head weight
 * copied, and the gate freshly initialised from `seed` as a new model of that seed would have it.
 * A model that already has a gate is returned as is.
 */
import { LoopedModel } from "./model.js";
import { stateDict } from "./state-dict.js";

/**
 * A gated copy of `model`: every weight kept, a fresh exit gate initialised with `seed` (the start
 * of stage 1 after pre-training); a model that already has a gate is returned as is.
 */
export function withExitGate(model: LoopedModel, opts: { seed: number }): LoopedModel {
  if (model.exitGate) return model;
  const gated = new LoopedModel({ ...model.config, exit_gate: true }, { seed: opts.seed });
  const sd = stateDict(model);
  for (const p of gated.parameters()) {
    const src = sd.get(p.name);
    if (src) p.tensor.data.set(src.data);
  }
  return gated;
}
