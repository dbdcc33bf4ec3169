/*
 * Small helpers of the chunked SSD scan: per-step decays and their in-chunk products (float64),
 * and the per-block axis swap of the saved states (on @loop/tensor/kernel's transposeInto, which
 * keeps every block product a plain, non-transposed `gemm`).
 */
import { transposeInto } from "@loop/tensor/kernel";

/**
 * For one chunk of one head: e_k = exp(dt_k·A) and E_i = Π_{k≤i} e_k = exp(Λ_i), Λ_i the in-chunk
 * cumulative sum of dt·A. Products of factors in (0, 1] never divide, so they are stable.
 * Where `resets[rOff + k]` is non-zero (a document starts at k) e_k is exactly 0: every decay
 * product that spans the boundary — within the chunk, into the chunk state, from the previous
 * chunk's state — vanishes, which is mamba_ssm's seq_idx behaviour; and since the backward
 * assigns each term's ∂Λ as (gradient × value), the zero factor also zeroes those gradients.
 */
export function chunkDecays(
  dt: Float32Array,
  dtOff: number,
  dtStride: number,
  Ah: number,
  L: number,
  e: Float64Array,
  E: Float64Array,
  resets: Float32Array | null = null,
  rOff = 0,
): void {
  let acc = 1;
  for (let k = 0; k < L; k++) {
    const v = resets && resets[rOff + k] !== 0 ? 0 : Math.exp(dt[dtOff + k * dtStride]! * Ah);
    e[k] = v;
    acc *= v;
    E[k] = acc;
  }
}

/** [B·H, P, N] ↔ [B·H, N, P]: swap the last two axes of each of `count` P×N blocks. */
export function swapLastAxes(
  src: Float32Array,
  count: number,
  rows: number,
  cols: number,
  dst: Float32Array,
): void {
  const sz = rows * cols;
  for (let i = 0; i < count; i++)
    transposeInto(src, i * sz, cols, rows, cols, dst.subarray(i * sz), rows);
}
