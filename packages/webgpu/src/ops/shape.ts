/*
 * Shape ops on GPU tensors, mirroring @loop/tensor's shape.ts. reshape is a view that shares the
 * buffer (no kernel runs); concat/split work along the last axis, concatLeading/splitLeading
 * along the first (the contract's `concat`/`split` with axis 0: contiguous blocks, one copy
 * each), sliceRows takes a contiguous range of axis 0, stack joins equal shapes on a new leading
 * axis — each a strided block copy (kernels/copy-rows.ts), whose backward copies the gradient
 * blocks back.
 */
import { shapeStr } from "@loop/tensor";
import { emptyLike, GpuTensor, type Shape } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { COPY_GROUP, copyRowsKernel } from "../kernels/copy-rows.js";
import { freshGrads, recordGpu } from "../tape.js";
import { fillInPlace } from "./elementwise-plain.js";

/** The same values with another shape (a view; the gradient is reshaped back). */
export function reshape(t: GpuTensor, shape: Shape): GpuTensor {
  const out = new GpuTensor(t.ctx, shape, { viewOf: t });
  recordGpu("reshape", [t], [out], ([g]) => [reshape(g!, t.shape)]);
  return out;
}

interface Block {
  t: GpuTensor;
  ld: number;
  off?: number;
}

/** dst block ← src block: `rows` rows of `w` elements. */
export function copyBlock(src: Block, dst: Block, rows: number, w: number): void {
  if (rows * w === 0) return;
  src.t.ctx.run(
    copyRowsKernel,
    { src: src.t, dst: dst.t },
    { rows, w, lds: src.ld, offs: src.off ?? 0, ldd: dst.ld, offd: dst.off ?? 0 },
    grid(rows * w, COPY_GROUP),
  );
}

/** Concatenate along the last axis; leading shapes must match. */
export function concat(xs: readonly GpuTensor[]): GpuTensor {
  if (xs.length === 0) throw new Error("webgpu concat: no tensors");
  const lead = xs[0]!.shape.slice(0, -1);
  if (xs.some((t) => t.shape.slice(0, -1).join() !== lead.join()))
    throw new Error(
      `webgpu concat: leading shapes differ: ${xs.map((t) => shapeStr(t.shape)).join(" vs ")}`,
    );
  const widths = xs.map((t) => t.lastDim);
  const W = widths.reduce((a, b) => a + b, 0);
  const rows = lead.reduce((p, d) => p * d, 1);
  const ctx = xs[0]!.ctx;
  const y = emptyLike(ctx, [...lead, W]);
  let off = 0;
  const offsets = widths.map((w) => {
    const o = off;
    off += w;
    return o;
  });
  xs.forEach((t, k) => {
    copyBlock({ t, ld: widths[k]! }, { t: y, ld: W, off: offsets[k] }, rows, widths[k]!);
  });
  recordGpu("concat", xs, [y], ([g]) =>
    freshGrads(xs, (gx, _, k) =>
      copyBlock({ t: g!, ld: W, off: offsets[k] }, { t: gx, ld: widths[k]! }, rows, widths[k]!),
    ),
  );
  return y;
}

/** Check widths against the last axis W; returns each piece's column offset. */
export function splitOffsets(op: string, x: GpuTensor, widths: readonly number[]): number[] {
  const W = x.lastDim;
  const total = widths.reduce((a, b) => a + b, 0);
  if (total !== W || widths.some((w) => !Number.isInteger(w) || w < 0))
    throw new Error(
      `webgpu ${op}: widths [${widths.join(",")}] do not sum to last axis ${W} of [${x.shape.join(",")}]`,
    );
  return widths.map((_, k) => widths.slice(0, k).reduce((a, b) => a + b, 0));
}

/** Split the last axis into pieces of the given widths (must sum to the axis size). */
export function split(x: GpuTensor, widths: readonly number[]): GpuTensor[] {
  const offsets = splitOffsets("split", x, widths);
  const W = x.lastDim;
  const rows = x.rows;
  const lead = x.shape.slice(0, -1);
  const ctx = x.ctx;
  const outs = widths.map((w, k) => {
    const y = emptyLike(ctx, [...lead, w]);
    copyBlock({ t: x, ld: W, off: offsets[k] }, { t: y, ld: w }, rows, w);
    return y;
  });
  recordGpu("split", [x], outs, (gys) => {
    const gx = emptyLike(ctx, x.shape);
    // Zeros only where a piece has no gradient.
    if (gys.some((g, k) => !g && widths[k]! > 0)) fillInPlace(gx, 0);
    gys.forEach((g, k) => {
      if (g)
        copyBlock({ t: g, ld: widths[k]! }, { t: gx, ld: W, off: offsets[k] }, rows, widths[k]!);
    });
    return [gx];
  });
  return outs;
}

/** Rows [start, end) along axis 0. */
export function sliceRows(x: GpuTensor, start: number, end: number): GpuTensor {
  const n = x.shape[0] ?? 0;
  if (!(Number.isInteger(start) && Number.isInteger(end) && 0 <= start && start <= end && end <= n))
    throw new Error(
      `webgpu sliceRows: range [${start}, ${end}) outside axis 0 of ${shapeStr(x.shape)}`,
    );
  const inner = n === 0 ? 0 : x.size / n;
  const ctx = x.ctx;
  const y = emptyLike(ctx, [end - start, ...x.shape.slice(1)]);
  const len = (end - start) * inner;
  copyBlock({ t: x, ld: len, off: start * inner }, { t: y, ld: len }, 1, len);
  recordGpu("sliceRows", [x], [y], ([g]) => {
    const gx = emptyLike(ctx, x.shape);
    fillInPlace(gx, 0);
    copyBlock({ t: g!, ld: len }, { t: gx, ld: len, off: start * inner }, 1, len);
    return [gx];
  });
  return y;
}

/** Stack equal-shape tensors along a new leading axis. */
export function stack(xs: readonly GpuTensor[]): GpuTensor {
  if (xs.length === 0) throw new Error("webgpu stack: no tensors");
  const s = xs[0]!.shape;
  for (const t of xs)
    if (t.shape.join() !== s.join())
      throw new Error(`webgpu stack: shapes differ: ${shapeStr(s)} vs ${shapeStr(t.shape)}`);
  const n = xs[0]!.size;
  const ctx = xs[0]!.ctx;
  const y = emptyLike(ctx, [xs.length, ...s]);
  xs.forEach((t, k) => {
    copyBlock({ t, ld: n }, { t: y, ld: n, off: k * n }, 1, n);
  });
  recordGpu("stack", xs, [y], ([g]) =>
    freshGrads(xs, (gx, _, k) => copyBlock({ t: g!, ld: n, off: k * n }, { t: gx, ld: n }, 1, n)),
  );
  return y;
}

/** Cut x along its first axis into pieces of `sizes` rows (summing to the axis). */
export function splitLeading(x: GpuTensor, sizes: readonly number[]): GpuTensor[] {
  const n = x.shape[0] ?? 0;
  const total = sizes.reduce((a, b) => a + b, 0);
  if (x.rank === 0 || total !== n || sizes.some((s) => !Number.isInteger(s) || s < 0))
    throw new Error(
      `webgpu split: sizes [${sizes.join(",")}] do not sum to axis 0 of ${shapeStr(x.shape)}`,
    );
  const inner = n === 0 ? 0 : x.size / n;
  const ctx = x.ctx;
  let start = 0;
  const offsets = sizes.map((s) => {
    const o = start * inner;
    start += s;
    return o;
  });
  const outs = sizes.map((s, k) => {
    const y = emptyLike(ctx, [s, ...x.shape.slice(1)]);
    copyBlock({ t: x, ld: y.size, off: offsets[k] }, { t: y, ld: y.size }, 1, y.size);
    return y;
  });
  recordGpu("splitLeading", [x], outs, (gys) => {
    const gx = emptyLike(ctx, x.shape);
    // Zeros only where a piece has no gradient.
    if (gys.some((g, k) => !g && sizes[k]! > 0)) fillInPlace(gx, 0);
    gys.forEach((g, k) => {
      if (g) copyBlock({ t: g, ld: g.size }, { t: gx, ld: g.size, off: offsets[k] }, 1, g.size);
    });
    return [gx];
  });
  return outs;
}

/** Join xs along their first axis (the other axes equal): splitLeading's inverse. */
export function concatLeading(xs: readonly GpuTensor[]): GpuTensor {
  if (xs.length === 0) throw new Error("webgpu concat: no tensors");
  const rest = xs[0]!.shape.slice(1);
  if (xs.some((t) => t.rank === 0 || t.shape.slice(1).join() !== rest.join()))
    throw new Error(
      `webgpu concat: shapes differ past axis 0: ${xs.map((t) => shapeStr(t.shape)).join(" vs ")}`,
    );
  const rows = xs.reduce((a, t) => a + t.shape[0]!, 0);
  const ctx = xs[0]!.ctx;
  const y = emptyLike(ctx, [rows, ...rest]);
  let off = 0;
  const offsets = xs.map((t) => {
    const o = off;
    off += t.size;
    return o;
  });
  xs.forEach((t, k) => {
    copyBlock({ t, ld: t.size }, { t: y, ld: t.size, off: offsets[k] }, 1, t.size);
  });
  recordGpu("concatLeading", xs, [y], ([g]) =>
    freshGrads(xs, (gx, t, k) =>
      copyBlock({ t: g!, ld: t.size, off: offsets[k] }, { t: gx, ld: t.size }, 1, t.size),
    ),
  );
  return y;
}
