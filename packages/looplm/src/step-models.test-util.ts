/*
 * Test support: the tiny models and batch whose training step the launch and dispatch counts
 * are pinned on (gpu-dispatches.test.ts on webgpu, cuda-launch-plan.test.ts on cuda), so that
 * the two backends' figures in docs/gpu.md and docs/cuda.md are of the same step.
 */
import { resolveTrainOptions } from "@loop/train";

/** One layer looped once at d_model 16; the backbone-specific fields come from MAMBA/TRANSFORMER. */
export const STEP_BASE = {
  vocab_size: 11,
  d_model: 16,
  n_layers: 1,
  n_loops: 1,
  ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
  attention: { n_heads: 2, n_kv_heads: 1 },
};

/** The tiny Mamba-2 model. */
export const STEP_MAMBA = { ...STEP_BASE, backbone: "mamba" } as const;

/** The tiny Transformer model (SwiGLU MLP of width 32). */
export const STEP_TRANSFORMER = {
  ...STEP_BASE,
  backbone: "transformer",
  mlp: { d_ff: 32 },
} as const;

/** The batch: 2 rows of 8 tokens. */
export const STEP_SHAPE = { batch: 2, seq: 8 };

/** The CLI's default training options: clipping and weight decay on. */
export const STEP_TRAIN = resolveTrainOptions({});
