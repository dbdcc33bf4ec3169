/*
 * The general ops of `TensorOps` (@loop/tensor) on the CUDA backend, each with its backward on
 * the tape: embedding (gather / atomic scatter-add), rmsnorm (row kernel, weight gradient by
 * columns), linear (one GEMM forward, two backward), reshape (a view) and the fused composite
 * linearSplit. The elementwise, split/concat and loss kernels have files of their own
 * (unary-ops, binary-ops, split-ops, loss-ops).
 */
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { gradTarget, leafTarget, record } from "../tape.js";
import { expect, expectShape, rowsOf } from "./shapes.js";
import { splitColumns } from "./split-ops.js";

/** ids [...S] → rows of w [V, D]: [...S, D]. */
export function embedding(ctx: CudaContext, ids: CudaTensor, w: CudaTensor): CudaTensor {
  expect(w.shape.length === 2, `embedding: weight has shape [${w.shape}], expected [V,D]`);
  const [V, D] = w.shape as [number, number];
  const M = ids.size;
  const y = ctx.empty([...ids.shape, D]);
  ctx.run("embedding_fwd", ctx.elems(M * D), [M, D, V, ids, w, y]);
  record(ctx, "embedding", [w], [y], ([g]) => {
    const target = leafTarget(ctx, w);
    const gw = target?.out ?? ctx.empty(w.shape);
    if (!target?.acc) ctx.device.zero(gw.ptr, gw.bytes);
    ctx.run("embedding_bwd", ctx.elems(M * D), [M, D, V, ids, g!, gw]);
    return [target ? null : gw];
  });
  return y;
}

/** x [..., D] · w [D] / rms(x). */
export function rmsnorm(ctx: CudaContext, x: CudaTensor, w: CudaTensor, eps: number): CudaTensor {
  const { rows, cols: D } = rowsOf(x);
  expectShape("rmsnorm", "weight", w, [D]);
  const y = ctx.empty(x.shape);
  const rstd = ctx.empty([rows]);
  if (rows > 0) ctx.run("rmsnorm_fwd", ctx.rows(rows), [D, eps, x, w, y, rstd]);
  record(ctx, "rmsnorm", [x, w], [y], ([g]) => {
    let gx: CudaTensor | null = null;
    let gw: CudaTensor | null = null;
    if (x.requiresGrad) {
      const target = gradTarget(ctx, x);
      const out = target?.out ?? ctx.empty(x.shape);
      ctx.run("rmsnorm_bwd", ctx.rows(rows), [D, g!, x, w, rstd, out, target?.acc ?? 0]);
      gx = target ? null : out;
    }
    if (w.requiresGrad) {
      const target = leafTarget(ctx, w);
      const out = target?.out ?? ctx.empty(w.shape);
      ctx.run("norm_wgrad", ctx.elems(D, 128), [rows, D, 1, g!, x, rstd, out, target?.acc ?? 0]);
      gw = target ? null : out;
    }
    return [gx, gw];
  });
  return y;
}

/** x [..., K] · wᵀ, w [N, K]. */
export function linear(ctx: CudaContext, x: CudaTensor, w: CudaTensor): CudaTensor {
  const { rows: M, cols: K } = rowsOf(x);
  expect(
    w.shape.length === 2 && w.shape[1] === K,
    `linear: weight has shape [${w.shape}], expected [N,${K}]`,
  );
  const N = w.shape[0]!;
  const y = ctx.empty([...x.shape.slice(0, -1), N]);
  ctx.gemm({ transA: false, transB: true, M, N, K, a: x, b: w, c: y });
  record(ctx, "linear", [x, w], [y], ([g]) => {
    let gx: CudaTensor | null = null;
    let gw: CudaTensor | null = null;
    if (x.requiresGrad) {
      // added into x's gradient where the walk already holds it (q, k, v of one input)
      const target = gradTarget(ctx, x);
      const out = target?.out ?? ctx.empty(x.shape);
      ctx.gemm({
        transA: false,
        transB: false,
        M,
        N: K,
        K: N,
        a: g!,
        b: w,
        c: out,
        beta: target?.acc ?? 0,
      });
      gx = target ? null : out;
    }
    if (w.requiresGrad) {
      // straight into a weight's gradient, beta 1 from its second use on (a looped block)
      const target = leafTarget(ctx, w);
      const out = target?.out ?? ctx.empty(w.shape);
      ctx.gemm({
        transA: true,
        transB: false,
        M: N,
        N: K,
        K: M,
        a: g!,
        b: x,
        c: out,
        beta: target?.acc ?? 0,
      });
      gw = target ? null : out;
    }
    return [gx, gw];
  });
  return y;
}

/**
 * linear(x, w) cut along the last axis into pieces of `widths`: the fused composite
 * `TensorOps.linearSplit`, whose definition is split(linear(x, w), widths, −1) and which runs as
 * exactly that — fused only in giving the product's block back at once (memory: the product of a
 * wide projection is the largest transient of a layer's forward).
 */
export function linearSplit(
  ctx: CudaContext,
  x: CudaTensor,
  w: CudaTensor,
  widths: readonly number[],
): CudaTensor[] {
  const y = linear(ctx, x, w);
  const pieces = splitColumns(ctx, y, widths);
  // no backward reads the product itself (linear's reads x and w, the split's only shapes):
  // its block goes back now rather than at the end of the step
  ctx.dispose(y);
  return pieces;
}

/** x as `shape` (a view of the same block). */
export function reshape(ctx: CudaContext, x: CudaTensor, shape: readonly number[]): CudaTensor {
  const size = shape.reduce((a, b) => a * b, 1);
  expect(size === x.size, `reshape: [${x.shape}] cannot become [${shape}]`);
  const y = ctx.view(x, shape);
  record(ctx, "reshape", [x], [y], ([g]) => [ctx.view(g!, x.shape)]);
  return y;
}
