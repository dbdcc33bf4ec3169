/**
 * Plain reference GEMM, the oracle for the fast kernels:
 *   C[i,j] = alpha · Σ_k op(A)[i,k] · op(B)[k,j] + beta · C[i,j]
 * op(A) is A [M,K] (row stride lda) or, transposed, A stored [K,M]; op(B) likewise [K,N] or [N,K].
 */
export function gemmRef(
  transA: boolean,
  transB: boolean,
  M: number,
  N: number,
  K: number,
  alpha: number,
  A: Float32Array,
  aOff: number,
  lda: number,
  B: Float32Array,
  bOff: number,
  ldb: number,
  beta: number,
  C: Float32Array,
  cOff: number,
  ldc: number,
): void {
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
}
