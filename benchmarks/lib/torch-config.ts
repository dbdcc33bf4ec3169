/** The model of a benchmark configuration as benchmarks/torch/model.py and decode.py take it. */
import { makeConfig } from "@loop/looped";
import type { BenchConfig } from "./training-step.js";

export function torchConfig(c: BenchConfig): Record<string, unknown> {
  const cfg = makeConfig(c.model);
  return {
    name: c.name,
    backbone: cfg.backbone,
    d_model: cfg.d_model,
    n_layers: cfg.n_layers,
    n_loops: cfg.n_loops,
    d_state: cfg.ssm.d_state,
    headdim: cfg.ssm.headdim,
    vocab: cfg.vocab_size,
    batch: c.batch,
    seq: c.seq,
    attn_layers: cfg.attn_layers,
    heads: cfg.attention.n_heads,
    kv_heads: cfg.attention.n_kv_heads,
  };
}
