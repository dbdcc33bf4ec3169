/*
 * Projected attention written once over any backend's kernels (docs/model.md §4):
 *   q = RoPE(u·wqᵀ) [B,T,Hq,hd],  k = RoPE(u·wkᵀ) [B,T,Hkv,hd],  v = u·wvᵀ [B,T,Hkv,hd]
 *   y = causal GQA attention(q, k, v) reshaped [B,T,Hq·hd],  hd = rows(wq)/Hq
 * A backend's fused `projectedAttention` (the CPU's) runs instead where it has one; the tests
 * hold the two to each other.
 */
import type { ModelOps, ProjectedAttentionOptions } from "@loop/tensor";

/** The kernels projected attention composes. */
export type ProjectedAttentionKernels<T, I> = Pick<
  ModelOps<T, I>,
  "linear" | "linears" | "reshape" | "rope" | "attention" | "shapeOf" | "projectedAttention"
>;

/** y [B,T,Hq·hd] from u [B,T,D] and the q, k, v projections (see the file comment). */
export function projectedAttentionOn<T, I>(
  ops: ProjectedAttentionKernels<T, I>,
  u: T,
  wq: T,
  wk: T,
  wv: T,
  opts: ProjectedAttentionOptions<I>,
): T {
  if (ops.projectedAttention) return ops.projectedAttention(u, wq, wk, wv, opts);
  const shape = ops.shapeOf(u);
  if (shape.length !== 3)
    throw new Error(`projectedAttention: u has shape [${shape}], expected [B,T,D]`);
  const [B, T] = shape as [number, number, number];
  const { nHeads: Hq, nKvHeads: Hkv } = opts;
  const hd = ops.shapeOf(wq)[0]! / Hq;
  if (!Number.isInteger(hd))
    throw new Error(`projectedAttention: q_proj has ${ops.shapeOf(wq)[0]} rows for ${Hq} heads`);
  // q, k and v as one product where the backend offers it (the same values)
  const [uq, uk, uv] = ops.linears
    ? (ops.linears(u, [wq, wk, wv]) as [T, T, T])
    : [ops.linear(u, wq), ops.linear(u, wk), ops.linear(u, wv)];
  const [q, k] = ops.rope(
    [ops.reshape(uq, [B, T, Hq, hd]), ops.reshape(uk, [B, T, Hkv, hd])],
    opts.rope ?? {},
  ) as [T, T];
  const v = ops.reshape(uv, [B, T, Hkv, hd]);
  const y = ops.attention(q, k, v, { seqIdx: opts.seqIdx ?? null });
  return ops.reshape(y, [B, T, Hq * hd]);
}
