import { describe, expect, it } from "vitest";
import { type GemmCase, gemmMaxError, gemmTolerance } from "./gemm-check.test-util.js";
import { gemmJs } from "./gemm-js.js";
import { gemmWasm, wasmSimdAvailable } from "./gemm-wasm.js";

const sizes: [number, number, number][] = [
  [1, 1, 1],
  [1, 8, 1],
  [4, 8, 16],
  [3, 5, 7],
  [5, 9, 2],
  [7, 17, 33],
  [13, 31, 300], // K spans two K blocks
  [64, 72, 64],
  [67, 130, 257],
  [2, 300, 5],
  [300, 3, 5],
];
const flags: [boolean, boolean][] = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
];

function cases(): GemmCase[] {
  const out: GemmCase[] = [];
  let i = 0;
  for (const [M, N, K] of sizes) {
    for (const [transA, transB] of flags) {
      const ab = [
        [1, 0],
        [0.5, 1],
        [-1.25, 0.75],
      ][i % 3]!;
      out.push({
        M,
        N,
        K,
        transA,
        transB,
        alpha: ab[0]!,
        beta: ab[1]!,
        pad: i % 2 ? 3 : 0,
        off: i % 3,
      });
      i++;
    }
  }
  return out;
}

describe("gemmWasm", () => {
  it("runs the WebAssembly SIMD kernel on Node 20", () => {
    expect(wasmSimdAvailable()).toBe(true);
  });

  it.each(cases().map((c) => [`${c.M}x${c.N}x${c.K} tA=${c.transA} tB=${c.transB}`, c] as const))(
    "matches gemmRef: %s",
    (_, c) => {
      expect(gemmMaxError(gemmWasm, c)).toBeLessThan(gemmTolerance(c.K));
    },
  );

  it("ignores C when beta = 0 (NaN in C does not leak)", () => {
    const c: GemmCase = { M: 9, N: 11, K: 6, transA: false, transB: false, alpha: 2, beta: 0 };
    expect(gemmMaxError(gemmWasm, c)).toBeLessThan(gemmTolerance(6));
  });

  it("scales C by beta when K = 0", () => {
    const c: GemmCase = { M: 5, N: 6, K: 0, transA: false, transB: true, alpha: 1, beta: 0.5 };
    expect(gemmMaxError(gemmWasm, c)).toBe(0);
  });

  it("handles several row chunks and B column chunks", () => {
    // 4100 rows × (64 + 8) floats exceeds one row chunk
    const rows: GemmCase = { M: 4100, N: 8, K: 64, transA: true, transB: false, alpha: 1, beta: 1 };
    expect(gemmMaxError(gemmWasm, rows)).toBeLessThan(gemmTolerance(64));
    // K·N > PACK_FLOATS: B is packed in column chunks
    const cols: GemmCase = {
      M: 3,
      N: 2056,
      K: 2048,
      transA: false,
      transB: true,
      alpha: 1,
      beta: 0,
    };
    expect(gemmMaxError(gemmWasm, cols)).toBeLessThan(gemmTolerance(2048));
  });
});

describe("gemmJs (the portable fallback)", () => {
  it.each(cases().map((c) => [`${c.M}x${c.N}x${c.K} tA=${c.transA} tB=${c.transB}`, c] as const))(
    "matches gemmRef: %s",
    (_, c) => {
      expect(gemmMaxError(gemmJs, c)).toBeLessThan(gemmTolerance(c.K));
    },
  );
});
