/*
 * The (cos, sin) tables of rotary position embedding (docs/model.md §4), shared by every
 * backend's RoPE: angles p·θ_i in float64 (p·θ in float32 loses the angle at large positions),
 * θ_i = theta^(−2i/hd), p = offset..offset+T−1.
 */

/** RoPE settings: base θ and the position of the first token. */
export interface RopeOptions {
  /** Base `rope_theta` (default 10000). */
  theta?: number;
  /** Position of the first token (default 0): decoding continues from the cache length. */
  offset?: number;
}

/** Throw unless `headDim` is a positive even integer (RoPE rotates pairs). */
export function checkHeadDim(headDim: number): void {
  if (!Number.isInteger(headDim) || headDim <= 0 || headDim % 2 !== 0) {
    throw new Error(`rope: head_dim must be a positive even integer, got ${headDim}`);
  }
}

/** cos and sin of p·θ_i for p = offset..offset+T-1, i < hd/2, laid out [T, hd/2]. */
export function ropeTables(
  headDim: number,
  T: number,
  theta: number,
  offset: number,
): { cos: Float64Array; sin: Float64Array } {
  checkHeadDim(headDim);
  if (!(theta > 0) || !Number.isFinite(theta)) {
    throw new Error(`rope: theta must be a positive finite number, got ${theta}`);
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new Error(`rope: offset must be a non-negative integer, got ${offset}`);
  }
  const half = headDim / 2;
  const cos = new Float64Array(T * half);
  const sin = new Float64Array(T * half);
  for (let i = 0; i < half; i++) {
    const freq = theta ** ((-2 * i) / headDim);
    for (let t = 0; t < T; t++) {
      const a = (offset + t) * freq;
      cos[t * half + i] = Math.cos(a);
      sin[t * half + i] = Math.sin(a);
    }
  }
  return { cos, sin };
}
