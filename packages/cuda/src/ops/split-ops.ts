/*
 * `TensorOps.split` and `concat` on the CUDA backend, along the first axis (the pieces are
 * contiguous blocks: one device copy each) or the last (strided: kernels/elementwise.cu
 * `copy_cols`, one launch per piece). The pieces are copies, never views of the input: each
 * keeps only its own block alive and a later write to one changes no other. Each backward is the
 * other op (a piece with no gradient contributes zeros).
 */
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { record } from "../tape.js";
import { expect, rowsOf } from "./shapes.js";

/** Throw unless `sizes` are non-negative integers summing to `n` (axis `axis` of `shape`). */
function checkSizes(sizes: readonly number[], n: number, shape: readonly number[], axis: 0 | -1) {
  expect(
    sizes.every((s) => Number.isInteger(s) && s >= 0) && sizes.reduce((a, b) => a + b, 0) === n,
    `split: sizes [${sizes}] do not sum to axis ${axis} of [${shape}]`,
  );
}

/** Copy all of `src` into `dst` from element `offset` on. */
function copyBlock(ctx: CudaContext, dst: CudaTensor, src: CudaTensor, offset: number): void {
  if (src.size > 0) ctx.copyInto(ctx.view(dst, src.shape, offset), src);
}

/** x cut along its first axis into pieces of `sizes` rows. */
function splitLeading(ctx: CudaContext, x: CudaTensor, sizes: readonly number[]): CudaTensor[] {
  expect(x.shape.length >= 1, `split: a scalar of shape [${x.shape}] has no axis 0`);
  const n = x.shape[0]!;
  checkSizes(sizes, n, x.shape, 0);
  const inner = n === 0 ? 0 : x.size / n;
  const rest = x.shape.slice(1);
  const offsets = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0) * inner);
  const outs = sizes.map((s, i) => {
    const y = ctx.empty([s, ...rest]);
    if (y.size > 0) ctx.copyInto(y, ctx.view(x, y.shape, offsets[i]!));
    return y;
  });
  record(ctx, "split", [x], outs, (gs) => {
    const gx = ctx.empty(x.shape);
    if (gs.some((g) => g === null)) ctx.device.zero(gx.ptr, gx.bytes);
    gs.forEach((g, i) => {
      if (g) copyBlock(ctx, gx, g, offsets[i]!);
    });
    return [gx];
  });
  return outs;
}

/** xs joined along their first axis. */
function concatLeading(ctx: CudaContext, xs: readonly CudaTensor[]): CudaTensor {
  const rest = xs[0]!.shape.slice(1);
  for (const x of xs)
    expect(
      x.shape.length === rest.length + 1 && x.shape.slice(1).every((d, i) => d === rest[i]),
      `concat: shapes differ past axis 0: ${xs.map((t) => `[${t.shape}]`).join(" vs ")}`,
    );
  const rows = xs.reduce((a, x) => a + x.shape[0]!, 0);
  const y = ctx.empty([rows, ...rest]);
  const offsets: number[] = [];
  let off = 0;
  for (const x of xs) {
    offsets.push(off);
    copyBlock(ctx, y, x, off);
    off += x.size;
  }
  // each input's gradient is its block of g: a view, no copy
  record(ctx, "concat", xs, [y], ([g]) => xs.map((x, i) => ctx.view(g!, x.shape, offsets[i]!)));
  return y;
}

/** x cut along its last axis into pieces of `widths` columns (copies; the backward joins them). */
export function splitColumns(
  ctx: CudaContext,
  x: CudaTensor,
  widths: readonly number[],
): CudaTensor[] {
  expect(x.shape.length >= 1, `split: a scalar of shape [${x.shape}] has no last axis`);
  const { rows, cols } = rowsOf(x);
  checkSizes(widths, cols, x.shape, -1);
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

/** xs joined along their last axis. */
function concatColumns(ctx: CudaContext, xs: readonly CudaTensor[]): CudaTensor {
  const lead = xs[0]!.shape.slice(0, -1);
  for (const x of xs)
    expect(
      x.shape.length === lead.length + 1 && x.shape.slice(0, -1).every((d, i) => d === lead[i]),
      `concat: leading shapes differ: ${xs.map((t) => `[${t.shape}]`).join(" vs ")}`,
    );
  const widths = xs.map((x) => x.shape[x.shape.length - 1]!);
  const cols = widths.reduce((a, b) => a + b, 0);
  const rows = lead.reduce((a, b) => a * b, 1);
  const y = ctx.empty([...lead, cols]);
  let off = 0;
  xs.forEach((x, i) => {
    const w = widths[i]!;
    if (rows * w > 0)
      ctx.run("copy_cols", ctx.elems(rows * w), [rows, w, x, w, 0, y, cols, off, 0]);
    off += w;
  });
  record(ctx, "concat", xs, [y], ([g]) => {
    let o = 0;
    return xs.map((x, i) => {
      const w = widths[i]!;
      const at = o;
      o += w;
      if (!x.requiresGrad) return null;
      const gx = ctx.empty(x.shape);
      if (rows * w > 0)
        ctx.run("copy_cols", ctx.elems(rows * w), [rows, w, g!, cols, at, gx, w, 0, 0]);
      return gx;
    });
  });
  return y;
}

/** `x` cut along axis 0 or −1 into pieces of `sizes`. */
export function split(
  ctx: CudaContext,
  x: CudaTensor,
  sizes: readonly number[],
  axis: 0 | -1,
): CudaTensor[] {
  expect(axis === 0 || axis === -1, `split: axis must be 0 or -1, got ${axis}`);
  return axis === 0 ? splitLeading(ctx, x, sizes) : splitColumns(ctx, x, sizes);
}

/** `xs` joined along axis 0 or −1. */
export function concat(ctx: CudaContext, xs: readonly CudaTensor[], axis: 0 | -1): CudaTensor {
  expect(axis === 0 || axis === -1, `concat: axis must be 0 or -1, got ${axis}`);
  expect(xs.length > 0, "concat: no tensors");
  return axis === 0 ? concatLeading(ctx, xs) : concatColumns(ctx, xs);
}
