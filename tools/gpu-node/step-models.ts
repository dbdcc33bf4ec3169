/**
 * The models the GPU node's step time measures (step-time.ts): the paper's d_model 768 scale —
 * a Mamba-2 `24⊗1` (mamba2-130m's shape), its looped iso-FLOPs `6⊗4`, and a hybrid `6⊗4` with
 * attention at layer 3 — at sequence SEQ, GPT-NeoX's vocabulary.
 */
import type { ModelConfigInput } from "@loop/looped";

/** Tokens per sequence. */
export const SEQ = 1024;
const V = 50280;
const SSM = { d_state: 128, headdim: 64, chunk_size: 64 };
const ATTN = { n_heads: 12, n_kv_heads: 12 };

/** [name, config] of each model. */
export const STEP_MODELS: readonly (readonly [string, ModelConfigInput])[] = [
  [
    "mamba2 d768 24x1",
    { vocab_size: V, d_model: 768, n_layers: 24, n_loops: 1, backbone: "mamba", ssm: SSM },
  ],
  [
    "mamba2 d768 6x4",
    { vocab_size: V, d_model: 768, n_layers: 6, n_loops: 4, backbone: "mamba", ssm: SSM },
  ],
  [
    "hybrid d768 6x4",
    {
      vocab_size: V,
      d_model: 768,
      n_layers: 6,
      n_loops: 4,
      backbone: "hybrid",
      attn_layers: [3],
      ssm: SSM,
      attention: ATTN,
    },
  ],
];
