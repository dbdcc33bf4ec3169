/*
 * The attention mixer's and the SwiGLU MLP's differentiable forwards (docs/model.md §4, §5),
 * written once against the backend ops (`ModelOps` of @loop/tensor) and their weights by their
 * §6 names (relative to the mixer or the MLP). The CPU's `AttentionMixer` and `SwiGluMlp` and
 * every device model run these:
 *   attention: out = attention(RoPE(u·q_projᵀ), RoPE(u·k_projᵀ), u·v_projᵀ)·o_projᵀ
 *   MLP:       out = down_proj(silu(gate_proj(x)) ⊙ up_proj(x))
 */
import type { AttentionOps, TensorOps } from "@loop/tensor";
import { type ProjectedAttentionKernels, projectedAttentionOn } from "./projected-attention-on.js";

/** The kernels the attention mixer needs from a backend. */
export type AttentionMixOps<T, I> = ProjectedAttentionKernels<T, I>;

/** Options of one attention mix: where the positions start and which document each belongs to. */
export interface AttentionMixOptions<I> {
  /** Position of the first token (default 0). */
  positionOffset?: number;
  /** Packed documents: [B·T] document index per position (a query sees its own document only). */
  seqIdx?: I | null;
}

/** u [B,T,D] → [B,T,D]; `w(name)` the weight named `name` (§6, relative to the mixer). */
export function attentionMix<T, I>(
  ops: AttentionMixOps<T, I>,
  cfg: { readonly nHeads: number; readonly nKvHeads: number; readonly ropeTheta: number },
  w: (name: string) => T,
  u: T,
  opts: AttentionMixOptions<I> = {},
): T {
  const y = projectedAttentionOn(
    ops,
    u,
    w("q_proj.weight"),
    w("k_proj.weight"),
    w("v_proj.weight"),
    {
      nHeads: cfg.nHeads,
      nKvHeads: cfg.nKvHeads,
      rope: { theta: cfg.ropeTheta, offset: opts.positionOffset ?? 0 },
      seqIdx: opts.seqIdx ?? null,
    },
  );
  return ops.linear(y, w("o_proj.weight"));
}

/** The ops the SwiGLU MLP needs from a backend: the projections and the fused `swiglu`. */
export type SwiGluMixOps<T, I> = Pick<TensorOps<T, I>, "linear" | "linears" | "done"> &
  Pick<AttentionOps<T, I>, "swiglu">;

/** x [..., D] → [..., D]; `w(name)` the weight named `name` (§6, relative to the MLP). */
export function swigluMix<T, I>(ops: SwiGluMixOps<T, I>, w: (name: string) => T, x: T): T {
  const wg = w("gate_proj.weight");
  const wu = w("up_proj.weight");
  // gate and up as one product where the backend offers it (the same values)
  const [gate, up] = ops.linears
    ? ops.linears(x, [wg, wu])
    : [ops.linear(x, wg), ops.linear(x, wu)];
  const h = ops.swiglu(gate!, up!);
  const out = ops.linear(h, w("down_proj.weight"));
  ops.done?.(h);
  return out;
}
