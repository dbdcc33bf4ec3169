/*
 * GEMM on the WebAssembly SIMD kernel of gemm.wat, same contract as gemm-ref.ts:
 *   C = alpha · op(A) · op(B) + beta · C,  op(A) [M,K], op(B) [K,N], C [M,N] row-major.
 * Operands live in JS Float32Arrays, the kernel in wasm linear memory, so per call this driver
 * copies op(B) in (column chunks of at most PACK_FLOATS packed floats) and packs it with
 * `pack_b`, then walks C in row chunks small enough to stay in L2 (CHUNK_FLOATS): copy the A rows
 * (and C rows when beta ≠ 0) in, run `gemm`, copy the C rows out. Copies are memcpy-speed
 * `TypedArray.set` calls and cost O(MK + KN + MN) against the O(MNK) arithmetic.
 * One wasm instance per thread (module state), so worker threads each get their own.
 */

import { gemmWasmBase64 } from "./gemm.wasm.js";
import type { GemmFn } from "./gemm-fn.js";
import { gemmJs } from "./gemm-js.js";

interface GemmExports {
  memory: WebAssembly.Memory;
  pack_b(src: number, ld: number, trans: number, K: number, N: number, dst: number): void;
  gemm(
    M: number,
    N: number,
    K: number,
    pA: number,
    rsA: number,
    csA: number,
    pB: number,
    pC: number,
    ldc: number,
    alpha: number,
    beta: number,
    kcB: number,
    mcB: number,
    ncB: number,
  ): void;
}

/** Cache blocking inside `gemm`: K slice, rows and columns of C per block (tuned, see docs). */
const KC = 256;
const MC = 64;
const NC = 256;
/** Most floats of packed B held at once; larger N is processed in column chunks. */
const PACK_FLOATS = 1 << 22;
/** Target floats of A rows + C rows per row chunk (≈1 MiB: copied data is still in cache). */
const CHUNK_FLOATS = 1 << 18;
/** Bytes 0..1023 of wasm memory: the kernel's scratch tile. */
const BASE = 1024;
const PAGE = 65536;

let exportsCache: GemmExports | null | undefined;
let heap: Float32Array = new Float32Array(0);

function decodeBase64(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function load(): GemmExports | null {
  if (exportsCache !== undefined) return exportsCache;
  exportsCache = null;
  try {
    if (typeof WebAssembly === "undefined") return null;
    const bytes = decodeBase64(gemmWasmBase64);
    // validate() is false when the engine lacks simd128
    if (!WebAssembly.validate(bytes)) return null;
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
    exportsCache = inst.exports as unknown as GemmExports;
  } catch {
    exportsCache = null;
  }
  return exportsCache;
}

/** True when this engine runs the WebAssembly SIMD kernel (else gemmWasm falls back to gemmJs). */
export function wasmSimdAvailable(): boolean {
  return load() !== null;
}

/** Make wasm memory at least `bytes` long and return a current float view of it. */
function ensure(ex: GemmExports, bytes: number): Float32Array {
  const have = ex.memory.buffer.byteLength;
  if (have < bytes) ex.memory.grow(Math.ceil((bytes - have) / PAGE));
  if (heap.buffer !== ex.memory.buffer) heap = new Float32Array(ex.memory.buffer);
  return heap;
}

/** Round a float count up to whole 16-byte vectors. */
const vec = (n: number): number => (n + 3) & ~3;

/**
 * Copy a rows×cols rectangle of src (row stride sLd) to dst (row stride dLd); into and out of
 * the heap, where blocks are packed (stride cols).
 */
function copyRect(
  dst: Float32Array,
  dOff: number,
  dLd: number,
  src: Float32Array,
  sOff: number,
  sLd: number,
  rows: number,
  cols: number,
): void {
  if ((dLd === cols && sLd === cols) || rows === 1) {
    dst.set(src.subarray(sOff, sOff + rows * cols), dOff);
    return;
  }
  for (let r = 0; r < rows; r++)
    dst.set(src.subarray(sOff + r * sLd, sOff + r * sLd + cols), dOff + r * dLd);
}

/** GEMM on the WebAssembly SIMD kernel: C = α·op(A)·op(B) + β·C. */
export const gemmWasm: GemmFn = (
  transA,
  transB,
  M,
  N,
  K,
  alpha,
  A,
  aOff,
  lda,
  B,
  bOff,
  ldb,
  beta,
  C,
  cOff,
  ldc,
) => {
  if (M <= 0 || N <= 0) return;
  const ex = load();
  if (ex === null || K <= 0) {
    gemmJs(transA, transB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc);
    return;
  }
  const nStep = Math.max(8, Math.floor(PACK_FLOATS / K / 8) * 8);
  for (let j0 = 0; j0 < N; j0 += nStep) {
    const nc = Math.min(nStep, N - j0);
    const packed = Math.ceil(nc / 8) * 8 * K;
    const pB = BASE / 4;
    const work = pB + packed;
    const mStep = Math.max(4, Math.floor(CHUNK_FLOATS / (K + nc)) & ~3);
    const chunk = Math.min(mStep, M);
    const need = work + Math.max(K * nc, vec(chunk * K) + chunk * nc);
    let h = ensure(ex, need * 4);
    // op(B) columns j0..j0+nc, copied as stored, then packed into 8-column panels
    if (!transB) copyRect(h, work, nc, B, bOff + j0, ldb, K, nc);
    else copyRect(h, work, K, B, bOff + j0 * ldb, ldb, nc, K);
    ex.pack_b(work * 4, transB ? K : nc, transB ? 1 : 0, K, nc, pB * 4);
    for (let i0 = 0; i0 < M; i0 += mStep) {
      const mc = Math.min(mStep, M - i0);
      const pA = work;
      const pC = work + vec(mc * K);
      h = heap;
      if (!transA) copyRect(h, pA, K, A, aOff + i0 * lda, lda, mc, K);
      else copyRect(h, pA, mc, A, aOff + i0, lda, K, mc);
      if (beta !== 0) copyRect(h, pC, nc, C, cOff + i0 * ldc + j0, ldc, mc, nc);
      const rsA = transA ? 1 : K;
      const csA = transA ? mc : 1;
      ex.gemm(mc, nc, K, pA * 4, rsA, csA, pB * 4, pC * 4, nc, alpha, beta, KC, MC, NC);
      copyRect(C, cOff + i0 * ldc + j0, ldc, h, pC, nc, mc, nc);
    }
  }
};
