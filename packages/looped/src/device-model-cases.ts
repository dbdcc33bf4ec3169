/*
 * The whole-model cases: small models of each backbone with the features that change the
 * forward (packed documents, an untied head, loop_norm, several SSM groups, grouped-query
 * attention). The device model's own test runs each on the CPU's ops (device-model.test.ts),
 * `looplm check` through every backend's device model against the CPU model on the oracle's
 * kernels, and looplm's WebGPU suite on its device: one table for all three, kept here because
 * looplm depends on this package and never the reverse.
 */

import { IGNORE_INDEX, Rng } from "@loop/tensor";

/** The cases' vocabulary. */
export const MODEL_CASE_VOCAB = 23;

/** Each case's config over `{ vocab_size: MODEL_CASE_VOCAB, d_model: 16 }`. */
export const MODEL_CASES = {
  "mamba, loop_norm, 2 groups, untied head": {
    backbone: "mamba",
    n_layers: 1,
    n_loops: 3,
    loop_norm: true,
    tie_embeddings: false,
    ssm: { d_state: 4, headdim: 8, n_groups: 2, chunk_size: 4 },
  },
  "hybrid with GQA": {
    backbone: "hybrid",
    n_layers: 2,
    n_loops: 2,
    attn_layers: [0],
    ssm: { d_state: 4, headdim: 8, chunk_size: 8 },
    attention: { n_heads: 4, n_kv_heads: 2 },
  },
  transformer: {
    backbone: "transformer",
    n_layers: 1,
    n_loops: 2,
    mlp: { d_ff: 24 },
    attention: { n_heads: 2, n_kv_heads: 1 },
  },
} as const;

/** Tokens, targets (every fifth ignored) and documents (a start at t = 4 in row 0) of B×T. */
export function modelCaseData(B: number, T: number, seed: number) {
  const rng = new Rng(seed);
  const tokens = Int32Array.from({ length: B * T }, () =>
    Math.floor(rng.uniform() * MODEL_CASE_VOCAB),
  );
  const targets = Int32Array.from({ length: B * T }, (_v, i) =>
    i % 5 === 3 ? IGNORE_INDEX : Math.floor(rng.uniform() * MODEL_CASE_VOCAB),
  );
  const seqIdx = Int32Array.from({ length: B * T }, (_v, i) => (i < T && i % T >= 4 ? 1 : 0));
  return { tokens, targets, seqIdx };
}
