/*
 * The CPU's attention and MLP ops as a `ModelOps` slice (@loop/tensor): this package's fused
 * ops, called as they are; index tensors (`seqIdx`) reach them as their Int32Array.
 */
import type { AttentionOps, IntTensor, Tensor } from "@loop/tensor";
import { projectedAttention } from "./projected-attention.js";
import { swiglu } from "./swiglu.js";

/**
 * The attention ops (`projectedAttention`, `swiglu`) on CPU tensors, for the model written against
 * `ModelOps`.
 */
export const cpuAttentionOps: AttentionOps<Tensor, IntTensor> = {
  projectedAttention: (u, wq, wk, wv, opts) =>
    projectedAttention(u, wq, wk, wv, { ...opts, seqIdx: opts.seqIdx?.data ?? null }),
  swiglu,
};
