/**
 * Enqueue one (batched) GEMM on device buffers — the non-differentiable primitive under matmul,
 * linear and linearSplit and their gradients. Shapes and layouts as in kernels/gemm.ts.
 */
import type { GpuContext } from "../gpu-context.js";
import { groups } from "../kernel-def.js";
import { GEMM_TILE, type GemmTile, gemmKernel } from "../kernels/gemm.js";

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
}

/** A 4-byte buffer bound where a kernel declares an input that a call does not use. */
const dummies = new WeakMap<GpuContext, GPUBuffer>();
export function dummyBuffer(ctx: GpuContext): GPUBuffer {
  let b = dummies.get(ctx);
  if (!b) {
    b = ctx.allocBytes(4);
    dummies.set(ctx, b);
  }
  return b;
}

export function gemm(ctx: GpuContext, call: GemmCall): void {
  const { M, N, K, a, b, c } = call;
  const batch = call.batch ?? 1;
  if (M === 0 || N === 0 || batch === 0) return;
  const tile = call.tile ?? GEMM_TILE;
  const kernel = gemmKernel(call.transA, call.transB, tile);
  ctx.run(
    kernel,
    { A: a.buf, B: b.buf, bias: call.bias ?? dummyBuffer(ctx), C: c.buf },
    {
      M,
      N,
      K,
      lda: a.ld,
      ldb: b.ld,
      ldc: c.ld,
      offA: a.off ?? 0,
      offB: b.off ?? 0,
      offC: c.off ?? 0,
      strideA: a.stride ?? 0,
      strideB: b.stride ?? 0,
      strideC: c.stride ?? 0,
      beta: call.beta ?? 0,
      hasBias: call.bias ? 1 : 0,
    },
    [groups(N, tile.bn), groups(M, tile.bm), batch],
  );
}
