/* NumPy-style broadcasting of two shapes, and the reduction of a gradient back to a shape. */
import { allocF32, type Shape, shapeStr, sizeOf } from "../tensor.js";

export function broadcastShape(a: Shape, b: Shape, op: string): number[] {
  const n = Math.max(a.length, b.length);
  const out: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const da = a[a.length - n + i] ?? 1;
    const db = b[b.length - n + i] ?? 1;
    if (da !== db && da !== 1 && db !== 1) {
      throw new Error(`${op}: shapes ${shapeStr(a)} and ${shapeStr(b)} do not broadcast`);
    }
    out[i] = da === 1 ? db : da;
  }
  return out;
}

/** For each flat output index, the flat index into an input of shape `s` broadcast to `out`. */
export function broadcastIndex(s: Shape, out: Shape): Int32Array | null {
  const n = sizeOf(out);
  if (sizeOf(s) === n) return null; // same layout
  const idx = new Int32Array(n);
  const rank = out.length;
  const strides: number[] = new Array(rank).fill(0);
  let st = 1;
  for (let i = rank - 1; i >= 0; i--) {
    const d = s[s.length - rank + i] ?? 1;
    strides[i] = d === 1 ? 0 : st;
    st *= d;
  }
  const pos: number[] = new Array(rank).fill(0);
  let cur = 0;
  for (let f = 0; f < n; f++) {
    idx[f] = cur;
    for (let ax = rank - 1; ax >= 0; ax--) {
      pos[ax]!++;
      cur += strides[ax]!;
      if (pos[ax]! < out[ax]!) break;
      cur -= strides[ax]! * pos[ax]!;
      pos[ax] = 0;
    }
  }
  return idx;
}

/** Sum `g` (laid out as `out`) into an array of shape `s` via the broadcast index map. */
export function reduceTo(g: Float32Array, idx: Int32Array | null, size: number): Float32Array {
  if (idx === null) return g;
  const r = allocF32(size);
  for (let f = 0; f < g.length; f++) r[idx[f]!]! += g[f]!;
  return r;
}

/**
 * Fast-path test: is `s` a suffix-broadcast of `out` (s equals the trailing dims of out, i.e.
 * one contiguous block repeated)? Returns the block length or 0.
 */
export function trailingBlock(s: Shape, out: Shape): number {
  if (s.length > out.length) return 0;
  // strip leading ones of s
  let k = 0;
  while (k < s.length && s[k] === 1) k++;
  for (let i = k; i < s.length; i++) {
    if (s[i] !== out[out.length - s.length + i]) return 0;
  }
  return sizeOf(s);
}
