/*
 * GEMM dispatch: every matmul in the project goes through `gemm`, whose implementation can be
 * swapped (portable JS, WebAssembly SIMD, worker-thread parallel) without touching callers.
 * Contract: C = alpha · op(A) · op(B) + beta · C (see gemm-ref.ts).
 * The default ("auto") is the WebAssembly SIMD kernel, split across the thread pool when one
 * is running and the product is big enough; gemm-js when the engine lacks WebAssembly SIMD.
 */
import { threadCount } from "../threads/pool.js";
import type { GemmFn } from "./gemm-fn.js";
import { gemmParallel } from "./gemm-parallel.js";
import { wasmSimdAvailable } from "./gemm-wasm.js";

export type { GemmFn } from "./gemm-fn.js";

const AUTO = "auto";
let impl: GemmFn = gemmParallel;
let implName = AUTO;

/** The installed GEMM implementation (pass it to `setGemm` to install it again). */
export function currentGemm(): { fn: GemmFn; name: string } {
  return { fn: impl, name: implName };
}

/** Install a GEMM implementation (returns the previous one; pass it back to restore). */
export function setGemm(fn: GemmFn, name: string): { fn: GemmFn; name: string } {
  const prev = currentGemm();
  impl = fn;
  implName = name;
  return prev;
}

/** Active implementation: "wasm-simd×2" (kernel × threads) for the default, else its name. */
export function gemmName(): string {
  if (implName !== AUTO) return implName;
  return `${wasmSimdAvailable() ? "wasm-simd" : "js"}×${threadCount()}`;
}

/**
 * The GEMM every op calls, C = α·op(A)·op(B) + β·C: the implementation installed with `setGemm`
 * (the native kernel once enabled), by default WebAssembly SIMD (plain TypeScript where it is
 * missing) split over the thread pool.
 */
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
