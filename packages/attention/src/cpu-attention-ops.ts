/*
 * The CPU's attention and MLP kernels as a `ModelOps` slice (@loop/tensor): this package's ops,
 * called as they are; index tensors (`seqIdx`) reach them as their Int32Array. The fused
 * `projectedAttention` is registered (the three projections packed, RoPE in place), with
 * `projectedAttentionOn`'s definition.
 */
import type { AttentionOps, IntTensor, Tensor } from "@loop/tensor";
import { attention } from "./attention.js";
import { projectedAttention } from "./projected-attention.js";
import { rope } from "./rope.js";
import { swiglu } from "./swiglu.js";

/** The attention kernels (`rope`, `attention`, `swiglu`, fused `projectedAttention`) on CPU tensors. */
export const cpuAttentionOps: AttentionOps<Tensor, IntTensor> = {
  rope: (xs, opts) => xs.map((x) => rope(x, opts)),
  attention: (q, k, v, opts) => attention(q, k, v, { seqIdx: opts.seqIdx?.data ?? null }),
  swiglu,
  projectedAttention: (u, wq, wk, wv, opts) =>
    projectedAttention(u, wq, wk, wv, { ...opts, seqIdx: opts.seqIdx?.data ?? null }),
};
