/*
 * The model configurations `looplm check` times. "full": the benchmarks' configurations 2–4
 * (benchmarks/lib/training-step.ts, whose test holds them equal to these): Mamba-2 D128 4⊗6,
 * D256 2⊗4, and the same D256 with an attention layer, at their batch and sequence length.
 * "small": the same three kinds at sizes an emulated GPU (SwiftShader) trains in seconds.
 */
import type { ModelConfigInput } from "@loop/looped";

/** A model, its batch and sequence length. */
export interface SpeedConfig {
  name: string;
  model: ModelConfigInput & { backbone: string };
  batch: number;
  seq: number;
}

const ssm = (d_state: number, headdim: number, chunk_size = 64) => ({
  d_state,
  headdim,
  expand: 2,
  n_groups: 1,
  d_conv: 4,
  chunk_size,
});

const D256: SpeedConfig = {
  name: "3: mamba D256 2⊗4",
  model: {
    backbone: "mamba",
    vocab_size: 256,
    d_model: 256,
    n_layers: 2,
    n_loops: 4,
    ssm: ssm(64, 64),
  },
  batch: 16,
  seq: 256,
};

/** The benchmarks' configurations 2–4. */
export const FULL_CONFIGS: readonly SpeedConfig[] = [
  {
    name: "2: mamba D128 4⊗6",
    model: {
      backbone: "mamba",
      vocab_size: 32,
      d_model: 128,
      n_layers: 4,
      n_loops: 6,
      ssm: ssm(32, 32),
    },
    batch: 32,
    seq: 128,
  },
  D256,
  {
    ...D256,
    name: "4: hybrid D256 2⊗4",
    model: {
      ...D256.model,
      backbone: "hybrid",
      attn_layers: [1],
      attention: { n_heads: 4, n_kv_heads: 4 },
    },
  },
];

const SMALL_CONFIGS: readonly SpeedConfig[] = [
  {
    name: "small mamba D32 1⊗2",
    model: {
      backbone: "mamba",
      vocab_size: 16,
      d_model: 32,
      n_layers: 1,
      n_loops: 2,
      ssm: ssm(8, 8, 16),
    },
    batch: 2,
    seq: 32,
  },
  {
    name: "small hybrid D32 2⊗2",
    model: {
      backbone: "hybrid",
      vocab_size: 16,
      d_model: 32,
      n_layers: 2,
      n_loops: 2,
      attn_layers: [1],
      ssm: ssm(8, 8, 16),
      attention: { n_heads: 2, n_kv_heads: 2 },
    },
    batch: 2,
    seq: 32,
  },
];

/** The configurations timed at `size`. */
export const speedConfigs = (size: "small" | "full"): readonly SpeedConfig[] =>
  size === "small" ? SMALL_CONFIGS : FULL_CONFIGS;
