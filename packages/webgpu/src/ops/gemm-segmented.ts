/*
 * One GEMM whose operands may each be stored as up to three pieces laid end to end along one
 * stored axis (kernels/gemm.ts, GemmSegments): the blocks of a split linear layer — in_proj's
 * z | xBC | dt, attention's q | k | v — read or written where they live, in one dispatch instead
 * of one per block. An operand split along K sums its pieces' products in k order inside the one
 * GEMM (the per-block GEMMs added their partial products instead: the same terms, reassociated).
 * fp32 only (`segmentedGemmOk`): under mixed precision the callers run one GEMM per block.
 */
import type { GpuContext } from "../gpu-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { groups } from "../kernel-def.js";
import {
  type GemmLoad,
  type GemmSegAxis,
  type GemmSegments,
  gemmKernel,
  vec4Ok,
} from "../kernels/gemm.js";
import { getOrMake } from "../memo.js";
import { gpuPrecision } from "../precision.js";
import { type GemmOperand, gemmTileFor, partialsTarget, splitKFor } from "./gemm.js";
import { placeholder } from "./optional-inputs.js";

/** One piece of a segmented operand: `len` rows or columns (along the split axis) at off, ld. */
export interface GemmPiece {
  buf: GPUBuffer;
  off?: number;
  ld: number;
  len: number;
  /** C only: 1 adds the product into this piece, 0 (default) overwrites it. */
  beta?: 0 | 1;
}

/** An operand stored as pieces along one of its stored axes. */
export interface GemmSegmented {
  axis: GemmSegAxis;
  pieces: readonly GemmPiece[];
}

export type GemmAnyOperand = GemmOperand | GemmSegmented;

export interface SegmentedGemmCall {
  transA: boolean;
  transB: boolean;
  M: number;
  N: number;
  K: number;
  a: GemmAnyOperand;
  b: GemmAnyOperand;
  c: GemmAnyOperand;
  /** An unsegmented C: 1 adds the product into it. */
  beta?: 0 | 1;
  /** An unsegmented C's tensor, to keep split-K partials in (GemmCall.sumInto). */
  sumInto?: GpuTensor;
}

/** Whether the segmented GEMM applies on `ctx` (its operands read as fp32). */
export function segmentedGemmOk(ctx: GpuContext): boolean {
  return gpuPrecision(ctx).precision !== "mixed";
}

export const isSeg = (o: GemmAnyOperand): o is GemmSegmented => "pieces" in o;

/** No bound: a piece index past the last piece is never selected. */
const NONE = 0xffffffff;

/**
 * Two 4-byte buffers per context for C's unused piece slots (never written: no piece selects
 * them): WebGPU forbids one buffer in two writable bindings of a dispatch.
 */
const spares = new WeakMap<GpuContext, GPUBuffer[]>();
function spare(ctx: GpuContext, s: number): GPUBuffer {
  return getOrMake(spares, ctx, () => [ctx.allocBytes(4), ctx.allocBytes(4)])[s - 1]!;
}

/**
 * Binds and params of a segmented operand X. Unused piece slots of A or B repeat the first
 * piece (read-only bindings may share a buffer), those of C take the spares above.
 */
function segBinding(
  ctx: GpuContext,
  X: "A" | "B" | "C",
  o: GemmSegmented,
  extent: number,
): { buffers: Record<string, GPUBuffer>; params: Record<string, number> } {
  const n = o.pieces.length;
  if (n < 1 || n > 3)
    throw new Error(`webgpu gemm: operand ${X} has ${n} pieces, 1 to 3 are supported`);
  const total = o.pieces.reduce((s, p) => s + p.len, 0);
  if (total !== extent)
    throw new Error(
      `webgpu gemm: the pieces of ${X} span ${total} along their axis, not ${extent}`,
    );
  const buffers: Record<string, GPUBuffer> = {};
  const params: Record<string, number> = {};
  let bound = 0;
  for (let s = 0; s < 3; s++) {
    const piece = o.pieces[s] ?? o.pieces[0]!;
    buffers[`${X}${s === 0 ? "" : s}`] = s >= n && X === "C" ? spare(ctx, s) : piece.buf;
    params[`${X}o${s}`] = s < n ? (piece.off ?? 0) : 0;
    params[`${X}l${s}`] = s < n ? piece.ld : 0;
    if (X === "C") params[`${X}beta${s}`] = s < n ? (piece.beta ?? 0) : 0;
    if (s > 0) params[`${X}b${s}`] = s < n ? bound : NONE;
    if (s < n) bound += piece.len;
  }
  return { buffers, params };
}

export function gemmSegmented(ctx: GpuContext, call: SegmentedGemmCall): void {
  const { M, N, K, transA, transB, a, b, c } = call;
  if (M === 0 || N === 0) return;
  if (!segmentedGemmOk(ctx))
    throw new Error("webgpu gemm: segmented operands need fp32 operands (not mixed precision)");
  // stored extents along each axis: A [M, K] ([K, M] transposed), B [K, N] ([N, K]), C [M, N]
  const along = (rows: number, cols: number, axis: GemmSegAxis) => (axis === "rows" ? rows : cols);
  const seg: GemmSegments = {};
  const buffers: Record<string, GPUBuffer> = {};
  const params: Record<string, number> = {};
  const plain = (X: "A" | "B" | "C", o: GemmOperand) => {
    buffers[X] = o.buf;
    params[`off${X}`] = o.off ?? 0;
    params[`ld${X.toLowerCase()}`] = o.ld;
  };
  const dims = { A: transA ? [K, M] : [M, K], B: transB ? [N, K] : [K, N], C: [M, N] } as const;
  for (const [X, o] of [
    ["A", a],
    ["B", b],
    ["C", c],
  ] as const) {
    if (isSeg(o)) {
      seg[X] = o.axis;
      const d = segBinding(ctx, X, o, along(dims[X][0], dims[X][1], o.axis));
      Object.assign(buffers, d.buffers);
      Object.assign(params, d.params);
      params[`off${X}`] = 0;
      params[`ld${X.toLowerCase()}`] = 0;
    } else plain(X, o);
  }
  const tile = gemmTileFor(M, N);
  const loadOf = (o: GemmAnyOperand): GemmLoad =>
    !isSeg(o) && vec4Ok(o.off ?? 0, o.ld, 0) ? "vec4" : "f32";
  const loadA = loadOf(a);
  const loadB = loadOf(b);
  const base = {
    M,
    N,
    K,
    strideA: 0,
    strideB: 0,
    strideC: 0,
    hasBias: 0,
    beta: call.beta ?? 0,
    splitK: 0,
    ...params,
  };
  const bias = placeholder(ctx);
  // Split-K only with a plain C (the partials' sum writes C).
  const split = isSeg(c) ? 1 : splitKFor(M, N, K, tile);
  if (split > 1 && !isSeg(c)) {
    const chunk = Math.ceil(K / split / tile.bk) * tile.bk;
    const S = Math.ceil(K / chunk);
    const to = partialsTarget(ctx, { S, M, N, c, beta: call.beta ?? 0 }, call.sumInto);
    const kernel = gemmKernel(transA, transB, tile, loadA, loadB, { A: seg.A, B: seg.B });
    ctx.run(
      kernel,
      { ...buffers, bias, C: to.buf },
      { ...base, ldc: N, offC: 0, strideC: M * N, beta: to.beta, splitK: chunk },
      [groups(N, tile.bn), groups(M, tile.bm), S],
    );
    to.finish();
    return;
  }
  call.sumInto?.settle();
  ctx.run(gemmKernel(transA, transB, tile, loadA, loadB, seg), { ...buffers, bias }, base, [
    groups(N, tile.bn),
    groups(M, tile.bm),
    1,
  ]);
}
