/** A tiny task and model shared by the run-folder tests. */
import { LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";

export const task = pHop({ alphabet: 3, length: 10, hops: 1 });
export const cfg = parseConfig({
  backbone: "mamba",
  vocab_size: task.vocabSize,
  d_model: 16,
  n_layers: 1,
  n_loops: 2,
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
});
export const fresh = (seed = 1) => new LoopedModel(cfg, { seed });
