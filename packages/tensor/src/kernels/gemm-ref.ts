/*
 * Plain reference GEMM, the oracle for the fast kernels:
 *   C[i,j] = alpha · Σ_k op(A)[i,k] · op(B)[k,j] + beta · C[i,j]
 * op(A) is A [M,K] (row stride lda) or, transposed, A stored [K,M]; op(B) likewise [K,N] or [N,K].
 */
import type { GemmFn } from "./gemm-fn.js";
/**
 * The reference GEMM, triple loop in double precision: C = α·op(A)·op(B) + β·C (tests compare the
 * fast ones against it).
 */
export const gemmRef: GemmFn = (
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
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) {
        const a = transA ? A[aOff + k * lda + i]! : A[aOff + i * lda + k]!;
        const b = transB ? B[bOff + j * ldb + k]! : B[bOff + k * ldb + j]!;
        s += a * b;
      }
      const c = cOff + i * ldc + j;
      C[c] = alpha * s + (beta === 0 ? 0 : beta * C[c]!);
    }
  }
};
