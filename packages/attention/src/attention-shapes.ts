/*
 * Shape contract shared by the attention kernels (docs/model.md §4):
 *   q [B, T, Hq, hd], k and v [B, T, Hkv, hd], Hq divisible by Hkv;
 *   query head j reads KV head floor(j·Hkv/Hq) = floor(j / (Hq/Hkv)).
 */
import { shapeStr, type Tensor } from "@loop/tensor";

/**
 * The sizes of an attention call: batch B, length T, query heads Hq, key/value heads Hkv, head size
 * hd.
 */
export interface AttentionDims {
  B: number;
  T: number;
  Hq: number;
  Hkv: number;
  hd: number;
  /** Query heads per KV head, Hq / Hkv. */
  group: number;
}

/**
 * The sizes of q [B,T,Hq,hd], k and v [B,T,Hkv,hd], checked against each other; `op` names the
 * caller in the error.
 */
export function attentionDims(q: Tensor, k: Tensor, v: Tensor, op: string): AttentionDims {
  if (q.rank !== 4) throw new Error(`${op}: q must be [B, T, Hq, hd], got ${shapeStr(q.shape)}`);
  const [B, T, Hq, hd] = q.shape as [number, number, number, number];
  if (k.rank !== 4 || k.shape[0] !== B || k.shape[1] !== T || k.shape[3] !== hd) {
    throw new Error(
      `${op}: k must be [${B}, ${T}, Hkv, ${hd}] to match q ${shapeStr(q.shape)}, got ${shapeStr(k.shape)}`,
    );
  }
  const Hkv = k.shape[2]!;
  if (v.rank !== 4 || v.shape.some((d, i) => d !== k.shape[i])) {
    throw new Error(`${op}: v must have k's shape ${shapeStr(k.shape)}, got ${shapeStr(v.shape)}`);
  }
  if (Hkv === 0 || Hq % Hkv !== 0) {
    throw new Error(
      `${op}: query heads Hq=${Hq} must be a multiple of KV heads Hkv=${Hkv} (grouped-query attention)`,
    );
  }
  if (hd === 0) throw new Error(`${op}: head_dim must be positive, got ${hd}`);
  return { B, T, Hq, Hkv, hd, group: Hq / Hkv };
}
