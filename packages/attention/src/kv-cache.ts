import { attendRow } from "./attend-row.js";
import { positiveInt } from "./init.js";
/**
 * Key/value cache of one attention layer for incremental decoding (docs/model.md §4).
 *   k, v: [B, Hkv, capacity, hd], already rotated keys; positions 0..length-1 are filled.
 * The [Hkv, position] order keeps each head's keys contiguous for the decode dot products.
 */
export class KvCache {
  /** Sequences B it holds. */
  readonly batch: number;
  /** Positions it can hold per sequence; appending beyond it throws. */
  readonly capacity: number;
  /** Key/value heads Hkv. */
  readonly nKvHeads: number;
  /** Per-head width hd. */
  readonly headDim: number;
  /** Rotated keys [B, Hkv, capacity, hd]. */
  readonly k: Float32Array;
  /** Values [B, Hkv, capacity, hd]. */
  readonly v: Float32Array;
  /** Number of filled positions; the next token has position `length`. */
  length = 0;

  constructor(batch: number, capacity: number, nKvHeads: number, headDim: number) {
    positiveInt(batch, "KvCache: batch");
    positiveInt(capacity, "KvCache: capacity");
    positiveInt(nKvHeads, "KvCache: nKvHeads");
    positiveInt(headDim, "KvCache: headDim");
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

  /** Count one more filled position (after every row's entry at `length` was written). */
  advance(): void {
    if (this.length >= this.capacity)
      throw new Error(`KvCache: position ${this.length} exceeds the capacity ${this.capacity}`);
    this.length++;
  }

  /**
   * Write one position's keys and values for the batch rows `rows`: k, v [rows.length, Hkv, hd]
   * (row j goes to batch row rows[j]) at `position`; the length is not changed.
   */
  writeRows(k: Float32Array, v: Float32Array, rows: readonly number[], position: number): void {
    const { capacity: cap, nKvHeads: Hkv, headDim: hd } = this;
    if (!Number.isInteger(position) || position < 0 || position >= cap)
      throw new Error(`KvCache: position ${position} is outside the capacity ${cap}`);
    rows.forEach((b, j) => {
      for (let g = 0; g < Hkv; g++) {
        const src = (j * Hkv + g) * hd;
        const dst = ((b * Hkv + g) * cap + position) * hd;
        this.k.set(k.subarray(src, src + hd), dst);
        this.v.set(v.subarray(src, src + hd), dst);
      }
    });
  }

  /**
   * A cache of the batch rows `rows` alone: their filled positions copied, room for one more
   * (capacity length + 1), same length. Step it, then `copyPositionFrom` brings the new entry back.
   */
  gatherRows(rows: readonly number[]): KvCache {
    const { capacity: cap, nKvHeads: Hkv, headDim: hd, length: L } = this;
    if (L >= cap) throw new Error(`KvCache: position ${L} exceeds the capacity ${cap}`);
    const sub = new KvCache(rows.length, L + 1, Hkv, hd);
    rows.forEach((b, j) => {
      for (let g = 0; g < Hkv; g++) {
        const src = (b * Hkv + g) * cap * hd;
        const dst = (j * Hkv + g) * (L + 1) * hd;
        sub.k.set(this.k.subarray(src, src + L * hd), dst);
        sub.v.set(this.v.subarray(src, src + L * hd), dst);
      }
    });
    sub.length = L;
    return sub;
  }

  /** Copy `sub`'s entry at `position` (a `gatherRows(rows)` cache) back into the rows. */
  copyPositionFrom(sub: KvCache, rows: readonly number[], position: number): void {
    const { capacity: cap, nKvHeads: Hkv, headDim: hd } = this;
    const subCap = sub.capacity;
    rows.forEach((b, j) => {
      for (let g = 0; g < Hkv; g++) {
        const src = ((j * Hkv + g) * subCap + position) * hd;
        const dst = ((b * Hkv + g) * cap + position) * hd;
        this.k.set(sub.k.subarray(src, src + hd), dst);
        this.v.set(sub.v.subarray(src, src + hd), dst);
      }
    });
  }

  /** Bytes held by the key and value buffers. */
  get bytes(): number {
    return this.k.byteLength + this.v.byteLength;
  }
}

/**
 * Append T positions' keys and values to `cache` (inference only): k, v [B, T, Hkv, hd] (k
 * rotated) go to positions length..length+T−1, and the length grows by T.
 */
export function appendKv(cache: KvCache, k: Float32Array, v: Float32Array, T: number): void {
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
  cache.length = L + T;
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
  appendKv(cache, k, v, T);
  const group = Hq / Hkv;
  const scratch = { scores: new Float64Array(L + T), acc: new Float64Array(hd) };
  for (let b = 0; b < B; b++) {
    for (let j = 0; j < Hq; j++) {
      const base = (b * Hkv + Math.floor(j / group)) * cap * hd;
      for (let t = 0; t < T; t++) {
        const qo = ((b * T + t) * Hq + j) * hd;
        attendRow(q, qo, cache.k, cache.v, base, L + t + 1, hd, scratch, out);
      }
    }
  }
}
