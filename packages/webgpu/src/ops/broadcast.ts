/*
 * Broadcasting on the device: the output shape of two operands (NumPy rules, as @loop/tensor),
 * elementwise kernels over broadcast operands, and the reduction of an output-shaped gradient
 * back onto an operand's shape. Shapes are collapsed first — neighbouring axes that broadcast
 * alike merge — so any rank the model uses fits the kernels' MAX_DIMS axes.
 */
import { shapeStr } from "@loop/tensor";
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor, type Shape } from "../gpu-tensor.js";
import { grid, groups } from "../kernel-def.js";
import {
  BCAST_GROUP,
  type BinaryFn,
  binaryKernel,
  MAX_DIMS,
  REDUCE_CHUNK,
  reduceKernel,
} from "../kernels/broadcast.js";

export function broadcastShape(a: Shape, b: Shape, op: string): number[] {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const da = a[a.length - n + i] ?? 1;
    const db = b[b.length - n + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1)
      throw new Error(`webgpu ${op}: shapes ${shapeStr(a)} and ${shapeStr(b)} do not broadcast`);
    out.push(da === 1 ? db : da);
  }
  return out;
}

/**
 * Axes of `out` with, for each operand, whether it broadcasts there; size-1 axes dropped and
 * neighbours of the same pattern merged.
 */
function collapse(
  out: Shape,
  operands: readonly Shape[],
  op: string,
): { dims: number[]; bcast: boolean[][] } {
  const dims: number[] = [];
  const bcast: boolean[][] = operands.map(() => []);
  let prev = "";
  out.forEach((d, i) => {
    if (d === 1) return;
    const flags = operands.map((s) => (s[s.length - out.length + i] ?? 1) === 1);
    const key = flags.join();
    if (key === prev) {
      dims[dims.length - 1]! *= d;
      return;
    }
    prev = key;
    dims.push(d);
    flags.forEach((f, k) => {
      bcast[k]!.push(f);
    });
  });
  if (dims.length > MAX_DIMS)
    throw new Error(
      `webgpu ${op}: broadcast of ${operands.map(shapeStr).join(" and ")} to ${shapeStr(out)} alternates over more than ${MAX_DIMS} axes`,
    );
  return { dims, bcast };
}

/** Kernel parameters d0…, and each operand's strides (0 on its broadcast axes), padded to MAX_DIMS. */
function axisParams(dims: readonly number[], bcast: readonly boolean[], prefix: string | null) {
  const params: Record<string, number> = {};
  const pad = MAX_DIMS - dims.length;
  let stride = 1;
  for (let k = MAX_DIMS - 1; k >= 0; k--) {
    const d = k < pad ? 1 : dims[k - pad]!;
    const b = k < pad ? true : bcast[k - pad]!;
    if (prefix === null) params[`d${k}`] = d;
    else {
      params[`${prefix}${k}`] = b ? 0 : stride;
      if (!b) stride *= d;
    }
  }
  return params;
}

/** f(a, b) written over `shape` (both operands broadcast to it), not recorded. */
function runBinary(
  fn: BinaryFn,
  a: GpuTensor,
  b: GpuTensor,
  shape: Shape,
  op: string,
  alpha: number,
): GpuTensor {
  const out = emptyLike(a.ctx, shape);
  const { dims, bcast } = collapse(shape, [a.shape, b.shape], op);
  a.ctx.run(
    binaryKernel(fn),
    { a, b, out },
    {
      n: out.size,
      alpha,
      ...axisParams(dims, bcast[0]!, null),
      ...axisParams(dims, bcast[0]!, "as"),
      ...axisParams(dims, bcast[1]!, "bs"),
    },
    grid(out.size, BCAST_GROUP),
  );
  return out;
}

/** f(a, b) over the broadcast of the two shapes, as a new tensor (not recorded). */
export function broadcastBinary(fn: BinaryFn, a: GpuTensor, b: GpuTensor, op: string): GpuTensor {
  return runBinary(fn, a, b, broadcastShape(a.shape, b.shape, op), op, 1);
}

/** alpha·x broadcast to `shape` (not recorded). */
export function expandTo(x: GpuTensor, shape: Shape, alpha = 1): GpuTensor {
  if (broadcastShape(x.shape, shape, "expand").join() !== shape.join())
    throw new Error(`webgpu expand: ${shapeStr(x.shape)} does not broadcast to ${shapeStr(shape)}`);
  return runBinary("expand", x, x, shape, "expand", alpha);
}

/**
 * alpha · Σ of `g` (laid out as a broadcast output) onto `shape`, the shape of an operand that
 * was broadcast to g's shape; with `square`, the sum of squares. Returns g itself when nothing is
 * summed (same shape, alpha 1, no squares) unless `fresh`: the caller must not write to it then.
 */
export function reduceToShape(
  g: GpuTensor,
  shape: Shape,
  opts: { alpha?: number; square?: boolean; fresh?: boolean } = {},
): GpuTensor {
  const alpha = opts.alpha ?? 1;
  const square = opts.square ?? false;
  if (!opts.fresh && alpha === 1 && !square && g.shape.join() === shape.join()) return g;
  const ctx: GpuContext = g.ctx;
  const out = emptyLike(ctx, shape);
  if (out.size === 0) return out;
  let { dims, bcast } = collapse(g.shape, [shape], "reduce");
  let mask = bcast[0]!;
  let src = g;
  let first = true;
  for (;;) {
    const n = dims.reduce((p, d, k) => (mask[k] ? p : p * d), 1);
    const cnt = dims.reduce((p, d, k) => (mask[k] ? p * d : p), 1);
    const chunks = groups(cnt, REDUCE_CHUNK);
    const dst = chunks === 1 ? out : emptyLike(ctx, [chunks, n]);
    const pad = MAX_DIMS - dims.length;
    const params: Record<string, number> = {
      n,
      cnt,
      chunks,
      bmask: 0,
      square: first && square ? 1 : 0,
      alpha: chunks === 1 ? alpha : 1,
    };
    for (let k = 0; k < MAX_DIMS; k++) {
      params[`d${k}`] = k < pad ? 1 : dims[k - pad]!;
      if (k >= pad && mask[k - pad]) params.bmask! |= 1 << k;
    }
    ctx.run(reduceKernel, { g: src, out: dst }, params, grid(n * chunks, BCAST_GROUP));
    if (dst === out) return out;
    // The partials [chunks, n] are reduced over their leading axis next.
    src = dst;
    dims = [chunks, n];
    mask = [true, false];
    first = false;
  }
}
