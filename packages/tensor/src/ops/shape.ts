/*
 * Shape ops. reshape shares storage (a view); concat/split work along the last axis;
 * sliceRows selects a contiguous range along axis 0; stack joins equal-shape tensors on a new
 * leading axis. Their backwards route gradient slices back to the inputs.
 */
import { record, record1 } from "../autograd/node.js";
import { allocF32, allocF32Uninit, type Shape, shapeStr, sizeOf, type Tensor } from "../tensor.js";
import { copyRows } from "./elementwise-kernels.js";

/** View with a new shape (one entry may be -1); no copy. */
export function reshape(x: Tensor, shape: Shape): Tensor {
  const s = [...shape];
  const neg = s.indexOf(-1);
  if (neg >= 0) {
    const rest = s.reduce((p, d, i) => (i === neg ? p : p * d), 1);
    s[neg] = rest === 0 ? 0 : x.size / rest;
  }
  if (sizeOf(s) !== x.size || s.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new Error(`reshape: cannot view ${shapeStr(x.shape)} as ${shapeStr(shape)}`);
  }
  return record1("reshape", [x], x.data, s, ([g]) => [g!]);
}

/** Concatenate along the last axis; leading shapes must match. */
export function concat(xs: readonly Tensor[]): Tensor {
  if (xs.length === 0) throw new Error("concat: no tensors");
  const lead = xs[0]!.shape.slice(0, -1);
  for (const t of xs) {
    if (t.shape.slice(0, -1).join(",") !== lead.join(",")) {
      throw new Error(
        `concat: leading shapes differ: ${xs.map((t) => shapeStr(t.shape)).join(" vs ")}`,
      );
    }
  }
  const widths = xs.map((t) => t.lastDim);
  const W = widths.reduce((a, b) => a + b, 0);
  const rows = sizeOf(lead);
  const y = allocF32Uninit(rows * W); // the pieces cover every column
  let off = 0;
  xs.forEach((t, k) => {
    const w = widths[k]!;
    copyRows(t.data, 0, w, y, off, W, rows, w);
    off += w;
  });
  return record1("concat", xs, y, [...lead, W], ([g], needs) => {
    let o = 0;
    return xs.map((_t, k) => {
      const w = widths[k]!;
      const start = o;
      o += w;
      if (!needs[k]) return null;
      const gx = allocF32Uninit(rows * w);
      copyRows(g!, start, W, gx, 0, w, rows, w);
      return gx;
    });
  });
}

/**
 * The last-axis size of x, checked against the widths of a split into pieces (non-negative
 * integers summing to it); `op` names the caller in the error.
 */
export function checkWidths(op: string, x: Tensor, widths: readonly number[]): number {
  const W = x.lastDim;
  const total = widths.reduce((a, b) => a + b, 0);
  if (total !== W || widths.some((w) => !Number.isInteger(w) || w < 0)) {
    throw new Error(
      `${op}: widths [${widths.join(",")}] do not sum to last axis ${W} of ${shapeStr(x.shape)}`,
    );
  }
  return W;
}

/** Split the last axis into pieces of the given widths (must sum to the axis size). */
export function split(x: Tensor, widths: readonly number[]): Tensor[] {
  const W = checkWidths("split", x, widths);
  const lead = x.shape.slice(0, -1);
  const rows = x.rows;
  let off = 0;
  const outs = widths.map((w) => {
    const d = allocF32Uninit(rows * w);
    copyRows(x.data, off, W, d, 0, w, rows, w);
    off += w;
    return { data: d, shape: [...lead, w] };
  });
  return record("split", [x], outs, (gys) => {
    // zeros only where a piece has no gradient
    const gx = gys.every((g) => g) ? allocF32Uninit(x.size) : allocF32(x.size);
    let o = 0;
    gys.forEach((g, k) => {
      const w = widths[k]!;
      if (g) copyRows(g, 0, w, gx, o, W, rows, w);
      o += w;
    });
    return [gx];
  });
}

/** Rows [start, end) along axis 0. */
export function sliceRows(x: Tensor, start: number, end: number): Tensor {
  const n = x.shape[0] ?? 0;
  if (!(0 <= start && start <= end && end <= n)) {
    throw new Error(`sliceRows: range [${start}, ${end}) outside axis 0 of ${shapeStr(x.shape)}`);
  }
  const inner = n === 0 ? 0 : x.size / n;
  const y = allocF32((end - start) * inner);
  y.set(x.data.subarray(start * inner, end * inner));
  return record1("sliceRows", [x], y, [end - start, ...x.shape.slice(1)], ([g]) => {
    const gx = allocF32(x.size);
    gx.set(g!, start * inner);
    return [gx];
  });
}

/** Stack equal-shape tensors along a new leading axis. */
export function stack(xs: readonly Tensor[]): Tensor {
  if (xs.length === 0) throw new Error("stack: no tensors");
  const s = xs[0]!.shape;
  for (const t of xs) {
    if (t.shape.join(",") !== s.join(",")) {
      throw new Error(`stack: shapes differ: ${shapeStr(s)} vs ${shapeStr(t.shape)}`);
    }
  }
  const n = xs[0]!.size;
  const y = allocF32(n * xs.length);
  xs.forEach((t, k) => {
    y.set(t.data, k * n);
  });
  return record1("stack", xs, y, [xs.length, ...s], ([g], needs) =>
    xs.map((_t, k) => (needs[k] ? g!.slice(k * n, k * n + n) : null)),
  );
}

/** Cut x along its first axis into pieces of `sizes` rows (summing to the axis). */
export function splitLeading(x: Tensor, sizes: readonly number[]): Tensor[] {
  const n = x.shape[0] ?? 0;
  if (sizes.reduce((a, b) => a + b, 0) !== n || sizes.some((s) => !Number.isInteger(s) || s < 0))
    throw new Error(
      `split: sizes [${sizes.join(",")}] do not sum to axis 0 of ${shapeStr(x.shape)}`,
    );
  const inner = n === 0 ? 0 : x.size / n;
  let start = 0;
  const outs = sizes.map((s) => {
    const d = allocF32Uninit(s * inner);
    d.set(x.data.subarray(start * inner, (start + s) * inner));
    start += s;
    return { data: d, shape: [s, ...x.shape.slice(1)] };
  });
  return record("split", [x], outs, (gys) => {
    const gx = allocF32(x.size);
    let o = 0;
    gys.forEach((g, k) => {
      if (g) gx.set(g, o * inner);
      o += sizes[k]!;
    });
    return [gx];
  });
}

/** Join xs along their first axis (the other axes equal): splitLeading's inverse. */
export function concatLeading(xs: readonly Tensor[]): Tensor {
  if (xs.length === 0) throw new Error("concat: no tensors");
  const rest = xs[0]!.shape.slice(1);
  for (const t of xs)
    if (t.shape.slice(1).join(",") !== rest.join(","))
      throw new Error(
        `concat: shapes differ past axis 0: ${xs.map((t) => shapeStr(t.shape)).join(" vs ")}`,
      );
  const total = xs.reduce((a, t) => a + t.size, 0);
  const y = allocF32Uninit(total);
  let o = 0;
  for (const t of xs) {
    y.set(t.data, o);
    o += t.size;
  }
  const rows = xs.reduce((a, t) => a + (t.shape[0] ?? 0), 0);
  return record1("concat", xs, y, [rows, ...rest], ([g], needs) => {
    let off = 0;
    return xs.map((t, k) => {
      const start = off;
      off += t.size;
      return needs[k] ? g!.slice(start, start + t.size) : null;
    });
  });
}
