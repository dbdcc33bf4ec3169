/*
 * The backbones every training check runs: `looplm check`'s short training runs and the WebGPU
 * training tests (gpu-tiny.test-util.ts) train the same three, so a backbone added here is
 * trained in both.
 */

/** Each backbone's settings over a one-layer Mamba-2 model looped twice (tinyModel). */
export const BACKBONES = {
  mamba: { backbone: "mamba" },
  hybrid: { backbone: "hybrid", n_layers: 2, attn_layers: [1] },
  transformer: { backbone: "transformer", mlp: { d_ff: 32 }, tie_embeddings: false },
} as const;

/** The small model the training checks start from: d_model 16, one layer looped twice. */
export const TINY_MODEL = {
  d_model: 16,
  n_layers: 1,
  n_loops: 2,
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
  attention: { n_heads: 2, n_kv_heads: 1 },
} as const;
