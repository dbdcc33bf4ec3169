/*
 * The general ops of `TensorOps` (@loop/tensor) on the CUDA backend, each with its backward on
 * the tape: embedding (gather / atomic scatter-add), rmsnorm (row kernel, weight gradient by
 * columns), add (with a trailing broadcast of b), linear (one GEMM forward, two backward),
 * linearSplit (linear, then a column copy per piece), reshape (a view), exp, neg, sigmoid and
 * the mean cross-entropy (row logsumexp, one-block masked mean; backward softmax − one-hot).
 */
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { gradTarget, leafTarget, record } from "../tape.js";
import { expect, expectShape, rowsOf } from "./shapes.js";

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

/** a + b, b of a's shape or of a trailing part of it (broadcast over the leading axes). */
export function add(ctx: CudaContext, a: CudaTensor, b: CudaTensor): CudaTensor {
  const tail = a.shape.slice(a.shape.length - b.shape.length);
  expect(
    b.shape.length <= a.shape.length && tail.every((d, i) => d === b.shape[i]),
    `add: shapes [${a.shape}] and [${b.shape}] do not broadcast`,
  );
  const y = ctx.empty(a.shape);
  ctx.run("add_bcast", ctx.elems(a.size), [a.size, Math.max(1, b.size), a, b, y]);
  record(ctx, "add", [a, b], [y], ([g]) => {
    let gb: CudaTensor | null = null;
    if (b.requiresGrad) {
      if (b.size === a.size) gb = g!;
      else {
        const target = leafTarget(ctx, b);
        const out = target?.out ?? ctx.empty(b.shape);
        ctx.run("col_sum", ctx.elems(b.size, 128), [
          a.size / b.size,
          b.size,
          g!,
          out,
          target?.acc ?? 0,
        ]);
        gb = target ? null : out;
      }
    }
    return [a.requiresGrad ? g! : null, gb];
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

/** x cut along its last axis into pieces of `widths` (copies; the backward joins them). */
export function splitColumns(
  ctx: CudaContext,
  x: CudaTensor,
  widths: readonly number[],
): CudaTensor[] {
  const { rows, cols } = rowsOf(x);
  const total = widths.reduce((a, b) => a + b, 0);
  expect(total === cols, `split: widths [${widths}] do not sum to the last axis ${cols}`);
  const lead = x.shape.slice(0, -1);
  const outs: CudaTensor[] = [];
  let off = 0;
  for (const w of widths) {
    const y = ctx.empty([...lead, w]);
    if (rows * w > 0)
      ctx.run("copy_cols", ctx.elems(rows * w), [rows, w, x, cols, off, y, w, 0, 0]);
    outs.push(y);
    off += w;
  }
  record(ctx, "split", [x], outs, (gs) => {
    const gx = ctx.empty(x.shape);
    if (gs.some((g) => g === null)) ctx.device.zero(gx.ptr, gx.bytes);
    let o = 0;
    gs.forEach((g, i) => {
      const w = widths[i]!;
      if (g && rows * w > 0)
        ctx.run("copy_cols", ctx.elems(rows * w), [rows, w, g, w, 0, gx, cols, o, 0]);
      o += w;
    });
    return [gx];
  });
  return outs;
}

/** linear(x, w) cut along the last axis into pieces of `widths`. */
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

/** eˣ. */
export function exp(ctx: CudaContext, x: CudaTensor): CudaTensor {
  const y = ctx.empty(x.shape);
  ctx.run("exp_fwd", ctx.elems(x.size), [x.size, x, y]);
  record(ctx, "exp", [x], [y], ([g]) => {
    const gx = ctx.empty(x.shape);
    ctx.run("mul_bwd", ctx.elems(x.size), [x.size, 0, g!, y, gx]);
    return [gx];
  });
  return y;
}

/** −x. */
export function neg(ctx: CudaContext, x: CudaTensor): CudaTensor {
  const y = ctx.empty(x.shape);
  ctx.axpy(-1, x, 0, y);
  record(ctx, "neg", [x], [y], ([g]) => {
    const gx = ctx.empty(x.shape);
    ctx.axpy(-1, g!, 0, gx);
    return [gx];
  });
  return y;
}

/** σ(x). */
export function sigmoid(ctx: CudaContext, x: CudaTensor): CudaTensor {
  const y = ctx.empty(x.shape);
  ctx.run("sigmoid_fwd", ctx.elems(x.size), [x.size, x, y]);
  record(ctx, "sigmoid", [x], [y], ([g]) => {
    const gx = ctx.empty(x.shape);
    ctx.run("sigmoid_bwd", ctx.elems(x.size), [x.size, 0, g!, y, gx]);
    return [gx];
  });
  return y;
}

/** Per-row logsumexp and loss (0 on ignored targets) of logits [..., V]. */
export function crossEntropyRows(
  ctx: CudaContext,
  logits: CudaTensor,
  targets: CudaTensor,
  loss: CudaTensor,
): { lse: CudaTensor; V: number; M: number } {
  const { rows: M, cols: V } = rowsOf(logits);
  expect(targets.size === M, `crossEntropy: ${targets.size} targets for ${M} rows of logits`);
  const lse = ctx.empty([M]);
  if (M > 0) ctx.run("ce_rows", ctx.rows(M), [V, logits, targets, loss, lse]);
  return { lse, V, M };
}

/** Mean cross-entropy of logits [..., V] over the targets ≠ IGNORE_INDEX: [1]. */
export function crossEntropy(
  ctx: CudaContext,
  logits: CudaTensor,
  targets: CudaTensor,
): CudaTensor {
  const M = rowsOf(logits).rows;
  const loss = ctx.empty([M]);
  const { lse, V } = crossEntropyRows(ctx, logits, targets, loss);
  const out = ctx.empty([1]);
  const count = ctx.empty([1]);
  ctx.run("masked_mean", ctx.rows(1), [M, targets, loss, 1, out, count]);
  record(ctx, "crossEntropy", [logits], [out], ([g]) => {
    const gce = ctx.empty([M]);
    ctx.run("ce_scale", ctx.elems(M), [M, targets, g!, count, gce]);
    const gx = ctx.empty(logits.shape);
    if (M > 0) ctx.run("ce_rows_bwd", ctx.rows(M), [V, gce, logits, targets, lse, gx, 0]);
    return [gx];
  });
  return out;
}
