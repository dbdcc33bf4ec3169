import { gemmRef } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { loadNativeGemm } from "./native-gemm.js";

function filled(n: number, seed: number): Float32Array {
  const a = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    a[i] = s / 2 ** 31 - 1;
  }
  return a;
}

describe("prototype native GEMM (optional)", () => {
  it("matches gemmRef when it builds, else explains why not", async () => {
    const native = await loadNativeGemm();
    if (!native.ok) {
      // the portable kernels remain in use; the reason must say what was missing
      expect(native.error.length).toBeGreaterThan(0);
      return;
    }
    const cases: [number, number, number][] = [
      [1, 1, 1],
      [13, 37, 300],
      [67, 130, 257],
      [5, 9, 0],
    ];
    for (const [M, N, K] of cases) {
      for (const tA of [false, true]) {
        for (const tB of [false, true]) {
          const lda = (tA ? M : K) + 1;
          const ldb = (tB ? K : N) + 2;
          const ldc = N + 3;
          const A = filled((tA ? K : M) * lda + 2, 1);
          const B = filled((tB ? N : K) * ldb + 2, 2);
          const C = filled(M * ldc + 2, 3);
          const R = C.slice();
          gemmRef(tA, tB, M, N, K, 0.7, A, 2, lda, B, 2, ldb, 0.5, R, 2, ldc);
          native.gemm(2)(tA, tB, M, N, K, 0.7, A, 2, lda, B, 2, ldb, 0.5, C, 2, ldc);
          let worst = 0;
          for (let i = 0; i < C.length; i++) worst = Math.max(worst, Math.abs(C[i]! - R[i]!));
          expect(worst).toBeLessThan(1e-5 * Math.max(8, K));
        }
      }
    }
  });
});
