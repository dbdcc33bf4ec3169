/*
 * Portable blocked GEMM in plain JavaScript (same contract as gemm-ref.ts):
 *   C = alpha · op(A) · op(B) + beta · C,  op(A) [M,K], op(B) [K,N], C [M,N] row-major.
 * Transposed operands are first packed into row-major panels so the inner loop always streams
 * contiguous rows of B (an axpy over j), which V8 compiles to tight scalar code.
 */
import type { GemmFn } from "./gemm-fn.js";
import { transposeInto } from "./transpose-into.js";

const KB = 256;

/**
 * The logical rows × cols matrix, packed row-major, whose transpose src holds: element (r, c) at
 * src[off + c·ld + r].
 */
function packTransposed(
  src: Float32Array,
  off: number,
  ld: number,
  rows: number,
  cols: number,
): Float32Array {
  const out = new Float32Array(rows * cols);
  transposeInto(src, off, ld, cols, rows, out, cols);
  return out;
}

/**
 * GEMM in plain TypeScript, blocked (the fallback where WebAssembly SIMD is missing): C =
 * α·op(A)·op(B) + β·C.
 */
export const gemmJs: GemmFn = (
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
  if (transA) {
    A = packTransposed(A, aOff, lda, M, K);
    aOff = 0;
    lda = K;
  }
  if (transB) {
    B = packTransposed(B, bOff, ldb, K, N);
    bOff = 0;
    ldb = N;
  }
  for (let i = 0; i < M; i++) {
    const c0 = cOff + i * ldc;
    if (beta === 0) C.fill(0, c0, c0 + N);
    else if (beta !== 1) for (let j = 0; j < N; j++) C[c0 + j]! *= beta;
  }
  for (let k0 = 0; k0 < K; k0 += KB) {
    const k1 = Math.min(K, k0 + KB);
    for (let i = 0; i < M; i++) {
      const c0 = cOff + i * ldc;
      const a0 = aOff + i * lda;
      let k = k0;
      // Four rows of B per pass: fewer loads/stores of C per multiply-add.
      for (; k + 3 < k1; k += 4) {
        const x0 = alpha * A[a0 + k]!;
        const x1 = alpha * A[a0 + k + 1]!;
        const x2 = alpha * A[a0 + k + 2]!;
        const x3 = alpha * A[a0 + k + 3]!;
        const b0 = bOff + k * ldb;
        const b1 = b0 + ldb;
        const b2 = b1 + ldb;
        const b3 = b2 + ldb;
        for (let j = 0; j < N; j++) {
          C[c0 + j] =
            C[c0 + j]! + x0 * B[b0 + j]! + x1 * B[b1 + j]! + x2 * B[b2 + j]! + x3 * B[b3 + j]!;
        }
      }
      for (; k < k1; k++) {
        const x = alpha * A[a0 + k]!;
        if (x === 0) continue;
        const b0 = bOff + k * ldb;
        for (let j = 0; j < N; j++) C[c0 + j]! += x * B[b0 + j]!;
      }
    }
  }
};
