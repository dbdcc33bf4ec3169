/**
 * The segmented GEMM (ops/gemm-segmented.ts) against the CPU oracle: random A and B cut into up
 * to three pieces (each in its own buffer, with its own offset and padded leading dimension)
 * along either stored axis, C likewise, for every transpose pair; the product of the whole
 * matrices in float64 is the reference (float32 rounding tolerance). Also a C piece added to
 * (beta 1) beside pieces overwritten, and a long K run split along K.
 */
import { Rng } from "@loop/tensor";
import { gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import type { GemmSegAxis } from "../kernels/gemm.js";
import { type GemmAnyOperand, type GemmPiece, gemmSegmented } from "./gemm-segmented.js";

const ctx = await gpuForTests("webgpu segmented gemm");

/** A dense rows×cols matrix (row-major). */
interface Mat {
  rows: number;
  cols: number;
  data: Float64Array;
}

function randomMat(rows: number, cols: number, rng: Rng): Mat {
  const data = new Float64Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = Math.fround(rng.uniformIn(-2, 2));
  return { rows, cols, data };
}

/** Cut sizes: `n` split into `k` pieces (the last may be 0 wide when n is small). */
function cuts(n: number, k: number): number[] {
  if (k === 1) return [n];
  if (k === 2) return [Math.floor(n / 3), n - Math.floor(n / 3)];
  const a = Math.max(1, Math.floor(n / 4));
  const b = Math.max(1, Math.floor(n / 3));
  return [a, b, n - a - b];
}

/**
 * Upload matrix `m` as pieces along `axis` (each piece its own buffer, at an offset, rows padded
 * by 3 NaN-filled elements); `initial` fills the pieces (C's old values) instead of `m`.
 */
function upload(m: Mat, axis: GemmSegAxis | null, k: number, beta?: (0 | 1)[]) {
  const sizes = axis ? cuts(axis === "rows" ? m.rows : m.cols, k) : [m.rows];
  const ax = axis ?? "rows";
  const pieces: (GemmPiece & { rows: number; cols: number; r0: number; c0: number })[] = [];
  let start = 0;
  sizes.forEach((len, s) => {
    const rows = ax === "rows" ? len : m.rows;
    const cols = ax === "rows" ? m.cols : len;
    const r0 = ax === "rows" ? start : 0;
    const c0 = ax === "rows" ? 0 : start;
    const ld = cols + 3;
    const off = 5 + s;
    const data = new Float32Array(off + rows * ld + 3).fill(Number.NaN);
    for (let r = 0; r < rows; r++)
      for (let c = 0; c < cols; c++) data[off + r * ld + c] = m.data[(r0 + r) * m.cols + c0 + c]!;
    const t = uploadTensor(ctx!, data, [data.length]);
    pieces.push({ buf: t.buffer, off, ld, len, beta: beta?.[s], rows, cols, r0, c0 });
    start += len;
  });
  const operand: GemmAnyOperand = axis
    ? { axis, pieces }
    : { buf: pieces[0]!.buf, off: pieces[0]!.off, ld: pieces[0]!.ld };
  return { operand, pieces };
}

/** Read the pieces of an uploaded matrix back into one dense matrix. */
async function readBack(
  m: Mat,
  pieces: Awaited<ReturnType<typeof upload>>["pieces"],
): Promise<Float64Array> {
  const out = new Float64Array(m.rows * m.cols);
  for (const p of pieces) {
    const all = new Float32Array(await ctx!.read(p.buf, p.off! + p.rows * p.ld));
    for (let r = 0; r < p.rows; r++)
      for (let c = 0; c < p.cols; c++)
        out[(p.r0 + r) * m.cols + p.c0 + c] = all[p.off! + r * p.ld + c]!;
  }
  return out;
}

/** C = op(A)·op(B) (+ old C where `add`), float64, and Σ|a||b| for the tolerance. */
function reference(
  A: Mat,
  B: Mat,
  transA: boolean,
  transB: boolean,
  M: number,
  N: number,
  K: number,
) {
  const want = new Float64Array(M * N);
  const mag = new Float64Array(M * N);
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      let s = 0;
      let g = 0;
      for (let k = 0; k < K; k++) {
        const a = transA ? A.data[k * A.cols + m]! : A.data[m * A.cols + k]!;
        const b = transB ? B.data[n * B.cols + k]! : B.data[k * B.cols + n]!;
        s += a * b;
        g += Math.abs(a * b);
      }
      want[m * N + n] = s;
      mag[m * N + n] = g;
    }
  return { want, mag };
}

describe.runIf(ctx)("webgpu segmented GEMM against the CPU oracle", () => {
  for (const [transA, transB] of [
    [false, false],
    [false, true],
    [true, false],
    [true, true],
  ] as const)
    it(`transA=${transA} transB=${transB}: every operand cut along either axis`, async () => {
      const [M, N, K] = [37, 70, 23];
      let seed = 1;
      // each operand cut alone along either axis, then two at once (at most two segmented
      // operands per GEMM: eight storage buffers per shader stage)
      const combos: [GemmSegAxis | null, GemmSegAxis | null, GemmSegAxis | null][] = [
        ["rows", null, null],
        ["cols", null, null],
        [null, "rows", null],
        [null, "cols", null],
        [null, null, "rows"],
        [null, null, "cols"],
        [transA ? "rows" : "cols", transB ? "cols" : "rows", null], // both along K
        [transA ? "cols" : "rows", null, "rows"], // along M
        [null, transB ? "rows" : "cols", "cols"], // along N
      ];
      for (const [ax, bx, cx] of combos) {
        const rng = new Rng(seed++);
        const A = transA ? randomMat(K, M, rng) : randomMat(M, K, rng);
        const B = transB ? randomMat(N, K, rng) : randomMat(K, N, rng);
        const C0 = randomMat(M, N, rng);
        const pieces = 3 - (seed % 2); // 2 or 3 pieces
        const beta: (0 | 1)[] = [0, 1, 0];
        const a = upload(A, ax, pieces);
        const b = upload(B, bx, pieces);
        const c = upload(C0, cx, pieces, beta);
        gemmSegmented(ctx!, {
          transA,
          transB,
          M,
          N,
          K,
          a: a.operand,
          b: b.operand,
          c: c.operand,
        });
        const got = await readBack(C0, c.pieces);
        const { want, mag } = reference(A, B, transA, transB, M, N, K);
        // a C piece with beta 1 holds its old value plus the product
        if (cx)
          for (const [s, p] of c.pieces.entries())
            if (beta[s])
              for (let r = 0; r < p.rows; r++)
                for (let q = 0; q < p.cols; q++) {
                  const i = (p.r0 + r) * N + p.c0 + q;
                  want[i] = want[i]! + C0.data[i]!;
                  mag[i] = mag[i]! + Math.abs(C0.data[i]!);
                }
        for (let i = 0; i < want.length; i++)
          expect(
            Math.abs(got[i]! - want[i]!),
            `A ${ax} B ${bx} C ${cx}: element ${i} ${got[i]} vs ${want[i]}`,
          ).toBeLessThanOrEqual(1e-6 * mag[i]! + 1e-30);
        releaseTransients(ctx!);
      }
    });

  it("split along K (a long K, small M·N) with A cut along M as in_proj's weight gradient, C added to", async () => {
    const [M, N, K] = [6, 9, 700];
    const rng = new Rng(77);
    const A = randomMat(K, M, rng); // transA: the weight gradient's gᵀ·x shape
    const B = randomMat(K, N, rng);
    const C0 = randomMat(M, N, rng);
    const a = upload(A, "cols", 3);
    const b = upload(B, null, 1);
    const c = upload(C0, null, 1);
    gemmSegmented(ctx!, {
      transA: true,
      transB: false,
      M,
      N,
      K,
      a: a.operand,
      b: b.operand,
      c: c.operand,
      beta: 1,
    });
    const got = await readBack(C0, c.pieces);
    const { want, mag } = reference(A, B, true, false, M, N, K);
    for (let i = 0; i < want.length; i++)
      expect(Math.abs(got[i]! - want[i]! - C0.data[i]!)).toBeLessThanOrEqual(
        1e-6 * (mag[i]! + Math.abs(C0.data[i]!)),
      );
    releaseTransients(ctx!);
  });
});
