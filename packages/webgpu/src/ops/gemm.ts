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
  /** Batch entries per dispatch (default and at most 65535, WebGPU's limit along z). */
  zLimit?: number;
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

/** WebGPU's guaranteed limit on workgroups per dimension (the batch runs along z). */
const MAX_Z = 65535;

export function gemm(ctx: GpuContext, call: GemmCall): void {
  const { M, N, K, a, b, c } = call;
  const batch = call.batch ?? 1;
  if (M === 0 || N === 0 || batch === 0) return;
  const tile = call.tile ?? GEMM_TILE;
  const kernel = gemmKernel(call.transA, call.transB, tile);
  // Batches beyond the z limit run as several dispatches over consecutive entries.
  const zLimit = Math.min(MAX_Z, call.zLimit ?? MAX_Z);
  for (let first = 0; first < batch; first += zLimit) {
    const at = (o: GemmOperand) => (o.off ?? 0) + first * (o.stride ?? 0);
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
        offA: at(a),
        offB: at(b),
        offC: at(c),
        strideA: a.stride ?? 0,
        strideB: b.stride ?? 0,
        strideC: c.stride ?? 0,
        beta: call.beta ?? 0,
        hasBias: call.bias ? 1 : 0,
      },
      [groups(N, tile.bn), groups(M, tile.bm), Math.min(zLimit, batch - first)],
    );
  }
}
