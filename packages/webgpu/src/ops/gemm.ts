/**
 * Enqueue one (batched) GEMM on device buffers — the non-differentiable primitive under matmul,
 * linear and linearSplit and their gradients. Shapes and layouts as in kernels/gemm.ts.
 */
import type { GpuContext } from "../gpu-context.js";
import { grid, groups } from "../kernel-def.js";
import {
  GEMM_TILE,
  type GemmTile,
  gemmKernel,
  SPLITK_GROUP,
  splitKSumKernel,
} from "../kernels/gemm.js";
import { placeholder } from "./optional-inputs.js";

/** A matrix operand: a buffer, an element offset, a leading dimension and a batch stride. */
export interface GemmOperand {
  buf: GPUBuffer;
  off?: number;
  ld: number;
  /** Elements between batch entries (0: the same matrix for every entry). */
  stride?: number;
}

export interface GemmCall {
  transA: boolean;
  transB: boolean;
  M: number;
  N: number;
  K: number;
  a: GemmOperand;
  b: GemmOperand;
  c: GemmOperand;
  /** Batch entries (workgroup z), default 1. */
  batch?: number;
  /** 1 adds the product into C; 0 (default) overwrites C. */
  beta?: 0 | 1;
  /** A [N] vector added to every row of C. */
  bias?: GPUBuffer;
  tile?: GemmTile;
  /** Batch entries per dispatch (default and at most 65535, WebGPU's limit along z). */
  zLimit?: number;
  /** K chunks (default: chosen by `splitKFor`; 1 turns split-K off). */
  splitK?: number;
}

/** Workgroups a GPU wants busy at once (an H200 has 132 SMs; more groups hide latency). */
const BUSY_GROUPS = 256;
/** The smallest K range worth a chunk of its own. */
const MIN_CHUNK = 256;

/**
 * How many K chunks a single product splits into: 1 unless its tile grid leaves the GPU idle and
 * K is long enough that each chunk still has MIN_CHUNK of it.
 */
export function splitKFor(M: number, N: number, K: number, tile: GemmTile = GEMM_TILE): number {
  const tiles = groups(M, tile.bm) * groups(N, tile.bn);
  if (tiles >= BUSY_GROUPS / 2) return 1;
  return Math.max(1, Math.min(Math.ceil(BUSY_GROUPS / tiles), Math.floor(K / MIN_CHUNK), 64));
}

/** WebGPU's guaranteed limit on workgroups per dimension (the batch runs along z). */
const MAX_Z = 65535;

export function gemm(ctx: GpuContext, call: GemmCall): void {
  const { M, N, K, a, b, c } = call;
  const batch = call.batch ?? 1;
  if (M === 0 || N === 0 || batch === 0) return;
  const tile = call.tile ?? GEMM_TILE;
  const kernel = gemmKernel(call.transA, call.transB, tile);
  const split = batch === 1 ? (call.splitK ?? splitKFor(M, N, K, tile)) : 1;
  const base = {
    M,
    N,
    K,
    lda: a.ld,
    ldb: b.ld,
    strideA: a.stride ?? 0,
    strideB: b.stride ?? 0,
    splitK: 0,
  };
  if (split > 1) {
    // Chunks of whole BK steps; the S partials [S, M, N] are then summed in order into C.
    const chunk = Math.ceil(K / split / tile.bk) * tile.bk;
    const S = Math.ceil(K / chunk);
    const partials = ctx.allocBytes(S * M * N * 4);
    ctx.run(
      kernel,
      { A: a.buf, B: b.buf, bias: placeholder(ctx), C: partials },
      {
        ...base,
        ldc: N,
        offA: a.off ?? 0,
        offB: b.off ?? 0,
        offC: 0,
        strideA: 0,
        strideB: 0,
        strideC: M * N,
        beta: 0,
        hasBias: 0,
        splitK: chunk,
      },
      [groups(N, tile.bn), groups(M, tile.bm), S],
    );
    ctx.run(
      splitKSumKernel,
      { P: partials, bias: call.bias ?? placeholder(ctx), C: c.buf },
      { M, N, S, ldc: c.ld, offC: c.off ?? 0, beta: call.beta ?? 0, hasBias: call.bias ? 1 : 0 },
      grid(M * N, SPLITK_GROUP),
    );
    // Dispatches run in order, so a later use of this buffer comes after the sum has read it.
    ctx.release(partials);
    return;
  }
  // Batches beyond the z limit run as several dispatches over consecutive entries.
  const zLimit = Math.min(MAX_Z, call.zLimit ?? MAX_Z);
  for (let first = 0; first < batch; first += zLimit) {
    const at = (o: GemmOperand) => (o.off ?? 0) + first * (o.stride ?? 0);
    ctx.run(
      kernel,
      { A: a.buf, B: b.buf, bias: call.bias ?? placeholder(ctx), C: c.buf },
      {
        ...base,
        ldc: c.ld,
        offA: at(a),
        offB: at(b),
        offC: at(c),
        strideC: c.stride ?? 0,
        beta: call.beta ?? 0,
        hasBias: call.bias ? 1 : 0,
      },
      [groups(N, tile.bn), groups(M, tile.bm), Math.min(zLimit, batch - first)],
    );
  }
}
