/*
 * Multi-threaded GEMM, same contract as gemm-ref.ts:
 *   C = alpha · op(A) · op(B) + beta · C,  op(A) [M,K], op(B) [K,N], C [M,N] row-major.
 * C is cut into bands that are independent GEMMs: row bands (rows lo..hi of C use rows lo..hi
 * of op(A) and all of op(B)), or column bands when M is too small to give every thread at
 * least MIN_ROWS rows (columns lo..hi of C use columns lo..hi of op(B)). Each band runs
 * gemmWasm on its own thread via parallelFor. Operands on ordinary (non-shared) memory are
 * first staged into SharedArrayBuffers so workers can see them (one memcpy each way).
 */

import { parallelFor, threadCount } from "../threads/pool.js";
import { defineKernel, type KernelArgs } from "../threads/registry.js";
import type { GemmFn } from "./gemm-fn.js";
import { gemmJs } from "./gemm-js.js";
import { gemmWasm } from "./gemm-wasm.js";

interface GemmArgs extends KernelArgs {
  tA: boolean;
  tB: boolean;
  M: number;
  N: number;
  K: number;
  alpha: number;
  A: Float32Array;
  aOff: number;
  lda: number;
  B: Float32Array;
  bOff: number;
  ldb: number;
  beta: number;
  C: Float32Array;
  cOff: number;
  ldc: number;
  byCols: boolean;
  /** Run the portable JS kernel instead of WebAssembly (benchmarks). */
  js: boolean;
}

/** Default smallest product (M·N·K multiply-adds) split across threads (measured, see docs). */
export const PARALLEL_MIN_MACS = 1 << 21;
let minMacs = PARALLEL_MIN_MACS;

/** Set the smallest product split across threads (0: split everything); returns the previous. */
export function setGemmParallelThreshold(macs: number): number {
  if (!(macs >= 0)) throw new Error(`setGemmParallelThreshold: macs must be ≥ 0, got ${macs}`);
  const prev = minMacs;
  minMacs = macs;
  return prev;
}
/** Fewest rows of C per thread for a row split (a few 4-row tiles, so B packing amortises). */
const MIN_ROWS = 32;
/** Staging buffers up to this many floats are kept for reuse; larger ones are left to the GC. */
const KEEP_SCRATCH = 1 << 22;

export const gemmKernelUrl: string = import.meta.url;

const gemmKernel = defineKernel<GemmArgs>("tensor/gemm", import.meta.url, (a, lo, hi) => {
  const base = a.js ? gemmJs : gemmWasm;
  // Part [lo, hi) of a column split moves B and C by lo columns; of a row split, A and C by lo rows.
  const cols = a.byCols;
  const aOff = cols ? a.aOff : a.aOff + (a.tA ? lo : lo * a.lda);
  const bOff = cols ? a.bOff + (a.tB ? lo * a.ldb : lo) : a.bOff;
  const cOff = a.cOff + (cols ? lo : lo * a.ldc);
  base(
    a.tA,
    a.tB,
    cols ? a.M : hi - lo,
    cols ? hi - lo : a.N,
    a.K,
    a.alpha,
    a.A,
    aOff,
    a.lda,
    a.B,
    bOff,
    a.ldb,
    a.beta,
    a.C,
    cOff,
    a.ldc,
  );
});

const isShared = (x: Float32Array): boolean =>
  typeof SharedArrayBuffer !== "undefined" && x.buffer instanceof SharedArrayBuffer;

const kept: (Float32Array | null)[] = [null, null, null];

function sharedScratch(slot: number, n: number): Float32Array {
  const k = kept[slot];
  if (k !== null && k !== undefined && k.length >= n) return k;
  const s = new Float32Array(new SharedArrayBuffer(Math.max(n, 16) * 4));
  if (n <= KEEP_SCRATCH) kept[slot] = s;
  return s;
}

/** Elements spanned by `rows` rows of `width` floats at stride ld. */
const span = (rows: number, width: number, ld: number): number => (rows - 1) * ld + width;

/** A GemmFn that splits big products over the pool and runs `base` on each part (or alone). */
function parallelGemm(js: boolean): GemmFn {
  const base = js ? gemmJs : gemmWasm;
  return (transA, transB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc) => {
    const threads = threadCount();
    if (threads < 2 || M * N * K < minMacs || M <= 0 || N <= 0 || K <= 0) {
      base(transA, transB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc);
      return;
    }
    const byCols = M < MIN_ROWS * threads && N > M;
    let sA = A;
    let sB = B;
    let sC = C;
    let sAOff = aOff;
    let sBOff = bOff;
    let sCOff = cOff;
    if (!isShared(A)) {
      const n = span(transA ? K : M, transA ? M : K, lda);
      sA = sharedScratch(0, n);
      sA.set(A.subarray(aOff, aOff + n));
      sAOff = 0;
    }
    if (!isShared(B)) {
      const n = span(transB ? N : K, transB ? K : N, ldb);
      sB = sharedScratch(1, n);
      sB.set(B.subarray(bOff, bOff + n));
      sBOff = 0;
    }
    const cSpan = span(M, N, ldc);
    if (!isShared(C)) {
      sC = sharedScratch(2, cSpan);
      // gaps between rows are copied too, so copying the span back leaves them unchanged
      if (beta !== 0 || ldc !== N) sC.set(C.subarray(cOff, cOff + cSpan));
      sCOff = 0;
    }
    const args: GemmArgs = {
      tA: transA,
      tB: transB,
      M,
      N,
      K,
      alpha,
      A: sA,
      aOff: sAOff,
      lda,
      B: sB,
      bOff: sBOff,
      ldb,
      beta,
      C: sC,
      cOff: sCOff,
      ldc,
      byCols,
      js,
    };
    if (byCols) parallelFor(gemmKernel, N, args, { grain: 8, minPerThread: 8 });
    else parallelFor(gemmKernel, M, args, { grain: 4, minPerThread: MIN_ROWS });
    if (sC !== C) C.set(sC.subarray(0, cSpan), cOff);
  };
}

/** WebAssembly SIMD GEMM on every pool thread when the product is big enough. */
export const gemmParallel: GemmFn = parallelGemm(false);

/** The portable JS kernel split the same way (for benchmarks and engines without wasm). */
export const gemmParallelJs: GemmFn = parallelGemm(true);
