import { fastExp } from "@loop/tensor";
/**
 * Key/value cache of one attention layer for incremental decoding (docs/model.md §4).
 *   k, v: [B, Hkv, capacity, hd], already rotated keys; positions 0..length-1 are filled.
 * The [Hkv, position] order keeps each head's keys contiguous for the decode dot products.
 */

export class KvCache {
  readonly batch: number;
  readonly capacity: number;
  readonly nKvHeads: number;
  readonly headDim: number;
  readonly k: Float32Array;
  readonly v: Float32Array;
  /** Number of filled positions; the next token has position `length`. */
  length = 0;

  constructor(batch: number, capacity: number, nKvHeads: number, headDim: number) {
    for (const [name, value] of [
      ["batch", batch],
      ["capacity", capacity],
      ["nKvHeads", nKvHeads],
      ["headDim", headDim],
    ] as const) {
      if (!Number.isInteger(value) || value <= 0) {
        throw new Error(`KvCache: ${name} must be a positive integer, got ${value}`);
      }
    }
    this.batch = batch;
    this.capacity = capacity;
    this.nKvHeads = nKvHeads;
    this.headDim = headDim;
    const n = batch * nKvHeads * capacity * headDim;
    this.k = new Float32Array(n);
    this.v = new Float32Array(n);
  }

  /** Forget every position (the buffers are reused). */
  reset(): void {
    this.length = 0;
  }

  /** Bytes held by the key and value buffers. */
  get bytes(): number {
    return this.k.byteLength + this.v.byteLength;
  }
}

/**
 * Append T positions to `cache` and attend to everything up to each one (inference only).
 *   q [B, T, Hq, hd] (rotated), k, v [B, T, Hkv, hd] (k rotated) → out [B, T, Hq, hd]:
 *   query t (position p = length + t) of head j attends cached positions 0..p of KV head
 *   floor(j·Hkv/Hq) with scores q·k/sqrt(hd) and a softmax over them.
 */
export function appendAndAttend(
  cache: KvCache,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  T: number,
  Hq: number,
  out: Float32Array,
): void {
  const { batch: B, capacity: cap, nKvHeads: Hkv, headDim: hd } = cache;
  const L = cache.length;
  if (L + T > cap) {
    throw new Error(`KvCache: appending ${T} position(s) at length ${L} exceeds capacity ${cap}`);
  }
  for (let b = 0; b < B; b++) {
    for (let g = 0; g < Hkv; g++) {
      for (let t = 0; t < T; t++) {
        const src = ((b * T + t) * Hkv + g) * hd;
        const dst = ((b * Hkv + g) * cap + L + t) * hd;
        cache.k.set(k.subarray(src, src + hd), dst);
        cache.v.set(v.subarray(src, src + hd), dst);
      }
    }
  }
  const group = Hq / Hkv;
  const c = 1 / Math.sqrt(hd);
  const scores = new Float64Array(L + T);
  const acc = new Float64Array(hd);
  for (let b = 0; b < B; b++) {
    for (let j = 0; j < Hq; j++) {
      const base = (b * Hkv + Math.floor(j / group)) * cap * hd;
      for (let t = 0; t < T; t++) {
        const qo = ((b * T + t) * Hq + j) * hd;
        const n = L + t + 1;
        let max = Number.NEGATIVE_INFINITY;
        for (let s = 0; s < n; s++) {
          const ko = base + s * hd;
          let dot = 0;
          for (let e = 0; e < hd; e++) dot += q[qo + e]! * cache.k[ko + e]!;
          scores[s] = c * dot;
          if (c * dot > max) max = c * dot;
        }
        let sum = 0;
        acc.fill(0);
        for (let s = 0; s < n; s++) {
          const p = fastExp(scores[s]! - max);
          sum += p;
          const vo = base + s * hd;
          for (let e = 0; e < hd; e++) acc[e]! += p * cache.v[vo + e]!;
        }
        for (let e = 0; e < hd; e++) out[qo + e] = acc[e]! / sum;
      }
    }
  }
  cache.length = L + T;
}
