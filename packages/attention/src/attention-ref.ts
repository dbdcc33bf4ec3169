/*
 * Plain quadratic reference for causal grouped-query attention (docs/model.md §4). It materialises
 * the full probability matrix of each (batch, head) — O(T²) memory — and exists to check the
 * tiled kernel in attention.ts against.
 *
 *   q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd]; query head j uses KV head
 *   g = floor(j·Hkv/Hq); scale c = 1/sqrt(hd):
 *     S[t,s] = c · q[t,j]·k[s,g]  (s ≤ t),  P = softmax_s(S),  y[t,j] = Σ_s P[t,s] v[s,g]
 *   Backward with G = ∂y:
 *     dP[t,s] = G[t,j]·v[s,g],  dS = P ⊙ (dP − rowsum(P ⊙ dP)),
 *     dq[t,j] = c Σ_s dS[t,s] k[s,g],  dk[s,g] += c Σ_t dS[t,s] q[t,j],  dv[s,g] += Σ_t P[t,s] G[t,j]
 */
import type { Tensor } from "@loop/tensor";
import { allocF32, record1 } from "@loop/tensor/kernel";
import { type AttentionDims, attentionDims } from "./attention-shapes.js";

/** Probabilities P [T, T] (zero above the diagonal) of query head j in batch b. */
function probabilities(
  q: Float32Array,
  k: Float32Array,
  d: AttentionDims,
  b: number,
  j: number,
): Float64Array {
  const { T, Hq, Hkv, hd, group } = d;
  const g = Math.floor(j / group);
  const c = 1 / Math.sqrt(hd);
  const P = new Float64Array(T * T);
  for (let t = 0; t < T; t++) {
    const qo = ((b * T + t) * Hq + j) * hd;
    let max = Number.NEGATIVE_INFINITY;
    for (let s = 0; s <= t; s++) {
      const ko = ((b * T + s) * Hkv + g) * hd;
      let dot = 0;
      for (let e = 0; e < hd; e++) dot += q[qo + e]! * k[ko + e]!;
      P[t * T + s] = c * dot;
      max = Math.max(max, c * dot);
    }
    let sum = 0;
    for (let s = 0; s <= t; s++) {
      const p = Math.exp(P[t * T + s]! - max);
      P[t * T + s] = p;
      sum += p;
    }
    for (let s = 0; s <= t; s++) P[t * T + s]! /= sum;
  }
  return P;
}

/** `visit` for every (batch b, query head j) with its KV head g and probabilities P [T, T]. */
function eachHead(
  q: Float32Array,
  k: Float32Array,
  d: AttentionDims,
  visit: (b: number, j: number, g: number, P: Float64Array) => void,
): void {
  for (let b = 0; b < d.B; b++) {
    for (let j = 0; j < d.Hq; j++)
      visit(b, j, Math.floor(j / d.group), probabilities(q, k, d, b, j));
  }
}

/** Causal GQA attention, quadratic reference (fused op with backward). */
export function attentionRef(q: Tensor, k: Tensor, v: Tensor): Tensor {
  const d = attentionDims(q, k, v, "attentionRef");
  const { T, Hq, Hkv, hd } = d;
  const y = allocF32(q.size);
  eachHead(q.data, k.data, d, (b, j, g, P) => {
    for (let t = 0; t < T; t++) {
      const yo = ((b * T + t) * Hq + j) * hd;
      for (let e = 0; e < hd; e++) {
        let acc = 0;
        for (let s = 0; s <= t; s++)
          acc += P[t * T + s]! * v.data[((b * T + s) * Hkv + g) * hd + e]!;
        y[yo + e] = acc;
      }
    }
  });
  return record1("attentionRef", [q, k, v], y, q.shape, ([gy]) => {
    const G = gy!;
    const dq = new Float32Array(q.size);
    const dk = new Float64Array(k.size);
    const dv = new Float64Array(v.size);
    const c = 1 / Math.sqrt(hd);
    eachHead(q.data, k.data, d, (b, j, g, P) => {
      for (let t = 0; t < T; t++) {
        const qo = ((b * T + t) * Hq + j) * hd;
        const dP = new Float64Array(t + 1);
        let rowDot = 0;
        for (let s = 0; s <= t; s++) {
          const vo = ((b * T + s) * Hkv + g) * hd;
          let acc = 0;
          for (let e = 0; e < hd; e++) acc += G[qo + e]! * v.data[vo + e]!;
          dP[s] = acc;
          rowDot += P[t * T + s]! * acc;
        }
        for (let s = 0; s <= t; s++) {
          const p = P[t * T + s]!;
          const dS = p * (dP[s]! - rowDot);
          const ko = ((b * T + s) * Hkv + g) * hd;
          for (let e = 0; e < hd; e++) {
            dq[qo + e]! += c * dS * k.data[ko + e]!;
            dk[ko + e]! += c * dS * q.data[qo + e]!;
            dv[ko + e]! += p * G[qo + e]!;
          }
        }
      }
    });
    return [dq, Float32Array.from(dk), Float32Array.from(dv)];
  });
}
