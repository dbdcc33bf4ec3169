/*
 * One query row's softmax attention over a head's cached keys and values (decoding):
 *   out[e] = Σ_{t<len} p_t·v[t, e] / Σ_t p_t,  p_t = exp(c·q·k[t] − max),  c = 1/sqrt(hd)
 * Keys and values of the head lie `hd` apart from `base` in kc and vc. The single-token step
 * (cpu-attend-step.ts) and the cache's appendAndAttend (kv-cache.ts) attend each row with it.
 */
import { fastExp } from "@loop/tensor/kernel";

/** Scratch of attendRow, reused across rows: scores [≥ len] and the accumulator [hd]. */
export interface AttendScratch {
  scores: Float64Array;
  acc: Float64Array;
}

/** out[qo..qo+hd) = the attention of q[qo..qo+hd) over the first `len` cached positions. */
export function attendRow(
  q: Float32Array,
  qo: number,
  kc: Float32Array,
  vc: Float32Array,
  base: number,
  len: number,
  hd: number,
  scratch: AttendScratch,
  out: Float32Array,
): void {
  const { scores, acc } = scratch;
  const c = 1 / Math.sqrt(hd);
  let max = Number.NEGATIVE_INFINITY;
  for (let t = 0; t < len; t++) {
    const ko = base + t * hd;
    let dot = 0;
    for (let e = 0; e < hd; e++) dot += q[qo + e]! * kc[ko + e]!;
    scores[t] = c * dot;
    if (c * dot > max) max = c * dot;
  }
  let sum = 0;
  acc.fill(0);
  for (let t = 0; t < len; t++) {
    const p = fastExp(scores[t]! - max);
    sum += p;
    const vo = base + t * hd;
    for (let e = 0; e < hd; e++) acc[e]! += p * vc[vo + e]!;
  }
  for (let e = 0; e < hd; e++) out[qo + e] = acc[e]! / sum;
}
