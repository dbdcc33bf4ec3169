/**
 * KV propagation for attention layers that an exited token skips (early-exit decoding, as CALM,
 * Schuster et al. 2022, does for skipped transformer layers). The next tokens attend to every
 * position of each (loop step, layer) cache, so a skipped step still needs an entry at the
 * token's position. It is filled from the token's exit hidden state h(z):
 *   u = rmsnorm(h(z), layer.norm),  k = RoPE(u·k_projᵀ, position L),  v = u·v_projᵀ   (docs/model.md §4)
 * written at position L = cache.length of each given row; the length is not advanced (the caller
 * does it once per step). Costs the k/v projections only: 4·D·Hkv·hd FLOPs per token, no query,
 * no attention, no o_proj, no MLP.
 * Shapes: h [rows.length, D] (row j belongs to batch row rows[j]); cache k, v [B, Hkv, cap, hd].
 */
import { AttentionMixer, type KvCache, ropeInPlace } from "@loop/attention";
import { linear, rmsnorm, type Tensor } from "@loop/tensor";
import type { Layer } from "./layer.js";

export function propagateKv(
  layer: Layer,
  cache: KvCache,
  h: Tensor,
  rows: readonly number[],
  eps: number,
): void {
  const mixer = layer.mixer;
  if (!(mixer instanceof AttentionMixer))
    throw new Error("propagateKv: layer must have an attention mixer, got a Mamba-2 mixer");
  const n = rows.length;
  if (h.shape[0] !== n)
    throw new Error(`propagateKv: h must have ${n} rows (one per row index), got ${h.shape[0]}`);
  const { capacity: cap, nKvHeads: Hkv, headDim: hd, length: L } = cache;
  if (L >= cap) throw new Error(`propagateKv: KV position ${L} exceeds the cache capacity ${cap}`);
  const u = rmsnorm(h, layer.norm, eps);
  const k = linear(u, mixer.kProj).data;
  const v = linear(u, mixer.vProj).data;
  ropeInPlace(k, [n, 1, Hkv, hd], mixer.cfg.ropeTheta, L);
  rows.forEach((b, j) => {
    for (let g = 0; g < Hkv; g++) {
      const src = (j * Hkv + g) * hd;
      const dst = ((b * Hkv + g) * cap + L) * hd;
      cache.k.set(k.subarray(src, src + hd), dst);
      cache.v.set(v.subarray(src, src + hd), dst);
    }
  });
}
