/**
 * The attention mixer (docs/model.md §4) on the device: a transcription of
 * `AttentionMixer.forward` (@loop/attention) at position offset 0, as its portable path composes
 * it: q, k ← RoPE(u·q_projᵀ, u·k_projᵀ); v = u·v_projᵀ; y = causal GQA attention(q, k, v)
 * (document mask from `seqIdx`); out = y·o_projᵀ.
 */
import type { ModelConfig } from "@loop/looped";
import type { GpuTensor } from "../gpu-tensor.js";
import { attention } from "../ops/attention.js";
import { linear } from "../ops/matmul.js";
import { rope } from "../ops/rope.js";
import { reshape } from "../ops/shape.js";
import type { GpuParameters } from "./gpu-parameters.js";

export class GpuAttentionMixer {
  private readonly qProj: GpuTensor;
  private readonly kProj: GpuTensor;
  private readonly vProj: GpuTensor;
  private readonly oProj: GpuTensor;

  constructor(
    private readonly cfg: ModelConfig,
    params: GpuParameters,
    prefix: string,
  ) {
    const at = (n: string) => params.get(`${prefix}${n}`);
    this.qProj = at("q_proj.weight");
    this.kProj = at("k_proj.weight");
    this.vProj = at("v_proj.weight");
    this.oProj = at("o_proj.weight");
  }

  /** u [B,T,D] → [B,T,D]. */
  forward(u: GpuTensor, seqIdx: GpuTensor | null): GpuTensor {
    const { n_heads: Hq, n_kv_heads: Hkv, rope_theta: theta } = this.cfg.attention;
    const [B, T, D] = u.shape as [number, number, number];
    const hd = D / Hq;
    const ropeOpts = { theta, offset: 0 };
    const q = rope(reshape(linear(u, this.qProj), [B, T, Hq, hd]), ropeOpts);
    const k = rope(reshape(linear(u, this.kProj), [B, T, Hkv, hd]), ropeOpts);
    const v = reshape(linear(u, this.vProj), [B, T, Hkv, hd]);
    const y = attention(q, k, v, { seqIdx });
    return linear(reshape(y, [B, T, Hq * hd]), this.oProj);
  }
}
