/**
 * GEMM dispatch: every matmul in the project goes through `gemm`, whose implementation can be
 * swapped (portable JS, WebAssembly SIMD, worker-thread parallel) without touching callers.
 * Contract: C = alpha · op(A) · op(B) + beta · C (see gemm-ref.ts).
 */
import { gemmJs } from "./gemm-js.js";

export type GemmFn = (
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
) => void;

let impl: GemmFn = gemmJs;
let implName = "js";

/** Install a GEMM implementation (returns the previous one). */
export function setGemm(fn: GemmFn, name: string): { fn: GemmFn; name: string } {
  const prev = { fn: impl, name: implName };
  impl = fn;
  implName = name;
  return prev;
}

export function gemmName(): string {
  return implName;
}

export const gemm: GemmFn = (
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
  if (M === 0 || N === 0) return;
  impl(transA, transB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc);
};
