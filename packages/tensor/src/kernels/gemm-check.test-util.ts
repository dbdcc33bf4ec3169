/**
 * Test helper: run a GEMM implementation and gemmRef on the same random operands (with offsets
 * and padded leading dimensions) and return the largest absolute difference.
 */
import type { GemmFn } from "./gemm-fn.js";
import { gemmRef } from "./gemm-ref.js";

export interface GemmCase {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
  alpha: number;
  beta: number;
  /** Extra floats per row of A, B and C beyond the logical width. */
  pad?: number;
  /** Leading offset into each buffer. */
  off?: number;
  /** Allocate operands in SharedArrayBuffers. */
  shared?: boolean;
}

function filled(n: number, seed: number, shared: boolean): Float32Array {
  const a = shared ? new Float32Array(new SharedArrayBuffer(n * 4)) : new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 2 ** 31 - 1;
  }
  return a;
}

/** Max |fn − gemmRef| over all of C (so writes outside the logical block are caught too). */
export function gemmMaxError(fn: GemmFn, c: GemmCase, seed = 1): number {
  const { M, N, K, transA, transB, alpha, beta } = c;
  const pad = c.pad ?? 0;
  const off = c.off ?? 0;
  const shared = c.shared ?? false;
  const lda = (transA ? M : K) + pad;
  const ldb = (transB ? K : N) + pad;
  const ldc = N + pad;
  const A = filled(off + (transA ? K : M) * lda, seed, shared);
  const B = filled(off + (transB ? N : K) * ldb, seed + 1, shared);
  const C = filled(off + M * ldc, seed + 2, shared);
  if (beta === 0) for (let i = off; i < C.length; i++) if ((i - off) % ldc < N) C[i] = Number.NaN;
  const expected = C.slice();
  gemmRef(transA, transB, M, N, K, alpha, A, off, lda, B, off, ldb, beta, expected, off, ldc);
  fn(transA, transB, M, N, K, alpha, A, off, lda, B, off, ldb, beta, C, off, ldc);
  let worst = 0;
  for (let i = 0; i < C.length; i++) {
    const d = Math.abs(C[i]! - expected[i]!);
    worst = Number.isNaN(d) ? Number.POSITIVE_INFINITY : Math.max(worst, d);
  }
  return worst;
}

/** Tolerance for a float32 dot product of length K with |terms| ≤ 1. */
export const gemmTolerance = (K: number): number => 1e-5 * Math.max(8, K);
