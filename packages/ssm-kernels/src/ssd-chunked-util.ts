/**
 * Small helpers of the chunked SSD scan: per-step decays and their in-chunk products (float64),
 * a strided transpose into preallocated scratch so every block product is a plain,
 * non-transposed `gemm` (no packing, no allocation per call), and shared-memory buffers for
 * the parallel passes.
 */
import { allocF32, threadCount } from "@loop/tensor";

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

/** dst[c·ldd + r] = src[off + r·lds + c] for r < rows, c < cols. */
export function transposeInto(
  src: Float32Array,
  off: number,
  lds: number,
  rows: number,
  cols: number,
  dst: Float32Array,
  ldd: number,
): void {
  for (let r = 0; r < rows; r++) {
    const s = off + r * lds;
    for (let c = 0; c < cols; c++) dst[c * ldd + r] = src[s + c]!;
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

const canShare = typeof SharedArrayBuffer !== "undefined";

/**
 * A zeroed buffer that worker threads can write: shared memory whenever a thread pool is
 * running (parallelFor runs serially if any argument is not shared). From `allocF32`, so inside
 * a withScratch scope it is a pooled step buffer: use it only for memory that dies with the op
 * or the step (outputs, saved tensors, gradients), never for caches kept across steps.
 */
export function allocShared(n: number): Float32Array {
  const a = allocF32(n);
  if (!canShare || threadCount() <= 1 || a.buffer instanceof SharedArrayBuffer) return a;
  // allocF32 only shares from 1024 floats up (and the pool from the same size)
  return new Float32Array(new SharedArrayBuffer(4 * n));
}

/** Float64 variant of `allocShared`. */
export function allocShared64(n: number): Float64Array {
  if (canShare && threadCount() > 1) return new Float64Array(new SharedArrayBuffer(8 * n));
  return new Float64Array(n);
}

/** `a` itself, or a shared copy (`allocShared`) when a thread pool runs and `a` is not shared. */
export function shareable(a: Float32Array): Float32Array {
  if (!canShare || threadCount() <= 1 || a.buffer instanceof SharedArrayBuffer) return a;
  const c = allocShared(a.length);
  c.set(a);
  return c;
}

/**
 * Backward temporaries reused across calls, keyed by role. Freshly allocated memory is costly
 * (every new page faults on first touch, several ms per MB on some VMs), and these buffers are
 * only alive during one backward call, so the largest size seen is kept. `ssdReleaseScratch`
 * frees them.
 */
const scratchCache = new Map<string, Float32Array>();

/**
 * A zeroed view of n floats from the scratch cache (shared memory while a pool runs); with
 * `zeroed` false a reused buffer keeps its old contents (for callers that write every element).
 */
export function scratch(key: string, n: number, zeroed = true): Float32Array {
  const wantShared = canShare && threadCount() > 1;
  let buf = scratchCache.get(key);
  if (
    buf === undefined ||
    buf.length < n ||
    (wantShared && !(buf.buffer instanceof SharedArrayBuffer))
  ) {
    // not allocShared: inside a withScratch scope that would hand out a pooled step buffer,
    // which returns to the pool (and to other ops) when the step ends while this cache keeps it
    buf = wantShared ? new Float32Array(new SharedArrayBuffer(4 * n)) : new Float32Array(n);
    scratchCache.set(key, buf);
    return buf;
  }
  const view = buf.subarray(0, n);
  if (zeroed) view.fill(0);
  return view;
}

/** Drop the cached backward temporaries of the chunked SSD scan. */
export function ssdReleaseScratch(): void {
  scratchCache.clear();
}
