/**
 * The fp32 GEMM's variants against the CPU oracle (a float64 product over the same stored
 * values) and against each other: vec4 operand loads and the 128×128 tile give the very same
 * bits as scalar loads on the 64×64 tile (every output sums its k terms in the same order), on
 * shapes that are multiples of neither the tiles nor 4, with padded rows and offsets (the layouts
 * where vec4 loads apply, their vectors straddling the matrix edges) and tight odd rows (where
 * they do not), batched, and split along K. Also the rule that picks the tile.
 */
import { gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { GEMM_TILE, GEMM_TILE_LARGE } from "../kernels/gemm.js";
import { gemmTileFor } from "./gemm.js";
import {
  type Layout,
  magnitudes,
  operands,
  type Product,
  reference,
  runOnDevice,
  TRANSPOSES,
  worstRatio,
} from "./gemm-cases.test-util.js";

const ctx = await gpuForTests("webgpu gemm variants");

const TIGHT: Layout = { off: 0, pad: 0 };
/** Rows padded to a multiple of 4 (and 4 more), 16-byte aligned offset: vec4 loads apply. */
const padded = (cols: number): Layout => ({ off: 8, pad: 4 + ((4 - (cols % 4)) % 4) });

describe("the GEMM tile rule", () => {
  it("takes 128×128 only when its grid alone keeps 128 workgroups busy", () => {
    expect(gemmTileFor(4096, 4096)).toBe(GEMM_TILE_LARGE);
    expect(gemmTileFor(1536, 1408)).toBe(GEMM_TILE_LARGE); // 12·11 = 132 tiles
    expect(gemmTileFor(1024, 1024)).toBe(GEMM_TILE); // 64 tiles of 128: too few
    expect(gemmTileFor(1024, 1024, 2)).toBe(GEMM_TILE_LARGE); // a batch of 2 makes 128
    expect(gemmTileFor(100, 100_000)).toBe(GEMM_TILE); // M below one large tile
  });
});

describe.runIf(ctx)("webgpu GEMM variants against the CPU oracle and each other", () => {
  const shapes: [number, number, number][] = [
    [5, 7, 3],
    [67, 130, 37],
    [129, 131, 22],
  ];
  for (const [M, N, K] of shapes)
    for (const [transA, transB] of TRANSPOSES) {
      const name = `M=${M} N=${N} K=${K} transA=${transA} transB=${transB}`;
      it(`${name}: vec4 and the large tile give the scalar 64×64 bits`, async () => {
        const aCols = transA ? M : K;
        const bCols = transB ? K : N;
        for (const [lay, vecExpected] of [
          [{ a: padded(aCols), b: padded(bCols) }, true],
          [{ a: TIGHT, b: TIGHT }, false],
        ] as const) {
          const p: Product = { M, N, K, transA, transB, batch: 1, ...lay };
          const o = operands(p, M * 31 + N + K);
          const want = reference(p, o);
          const mag = magnitudes(p, o);
          const base = await runOnDevice(ctx!, p, o, { tile: GEMM_TILE, vec4: false });
          expect(base.plan.loadA).toBe("f32");
          const { ratio, at } = worstRatio(base.out, want, mag, 1e-6);
          expect(ratio, `element ${at}: ${base.out[at]} vs ${want[at]}`).toBeLessThanOrEqual(1);
          for (const tile of [GEMM_TILE, GEMM_TILE_LARGE]) {
            const v = await runOnDevice(ctx!, p, o, { tile });
            // vec4 exactly where the layout allows it: 4-aligned offset and rows
            const expectLoad = vecExpected || (lay.a.pad === 0 && aCols % 4 === 0);
            expect(v.plan.loadA).toBe(expectLoad ? "vec4" : "f32");
            expect(
              Array.from(v.out),
              `tile ${tile.bm}, loads ${v.plan.loadA}/${v.plan.loadB}`,
            ).toEqual(Array.from(base.out));
          }
        }
      });
    }

  it("batched (3 entries with padded strides) and split along K (M=5, N=7, K=600)", async () => {
    for (const p of [
      { M: 33, N: 18, K: 21, transA: true, transB: false, batch: 3 },
      { M: 5, N: 7, K: 600, transA: false, transB: true, batch: 1 },
      { M: 6, N: 9, K: 530, transA: true, transB: false, batch: 1 },
    ]) {
      const aCols = p.transA ? p.M : p.K;
      const bCols = p.transB ? p.K : p.N;
      const prod: Product = { ...p, a: padded(aCols), b: padded(bCols) };
      const o = operands(prod, 11 + p.K);
      const base = await runOnDevice(ctx!, prod, o, { vec4: false });
      const v = await runOnDevice(ctx!, prod, o);
      expect([v.plan.loadA, v.plan.loadB]).toEqual(["vec4", "vec4"]);
      const { ratio, at } = worstRatio(v.out, reference(prod, o), magnitudes(prod, o), 1e-6);
      expect(ratio, `element ${at}`).toBeLessThanOrEqual(1);
      expect(Array.from(v.out)).toEqual(Array.from(base.out));
    }
  });
});
