/*
 * Broadcasting binary ops: add, sub, mul, div.
 *   add: y = a + b   ∂a = g, ∂b = g      sub: y = a − b   ∂a = g, ∂b = −g
 *   mul: y = a·b     ∂a = g·b, ∂b = g·a  div: y = a/b     ∂a = g/b, ∂b = −g·a/b²
 * Gradients of broadcast operands are summed back to their shape.
 * Equal shapes and an operand that is one block repeated along leading axes (a bias [D] against
 * [B,T,D], a scalar) run without an index map; other broadcasts use one (broadcast.ts).
 */
import { record1 } from "../autograd/node.js";
import { kernelSet } from "../native-registry.js";
import { allocF32, allocF32Uninit, type Shape, sizeOf, type Tensor } from "../tensor.js";
import { broadcastIndex, broadcastShape, reduceTo, trailingBlock } from "./broadcast.js";

export type Kind = "add" | "sub" | "mul" | "div";

/**
 * How an operand maps onto the output: "same" (same layout), a block length L (element i reads
 * i mod L: repeated along leading axes), or an index map.
 */
type Layout = "same" | number | Int32Array;

function layoutOf(s: Shape, out: Shape): Layout {
  const n = sizeOf(out);
  if (sizeOf(s) === n) return "same";
  const block = trailingBlock(s, out);
  if (block > 0) return block;
  return broadcastIndex(s, out)!;
}

function at(d: Float32Array, lay: Layout, i: number): number {
  return lay === "same" ? d[i]! : typeof lay === "number" ? d[i % lay]! : d[lay[i]!]!;
}

/** Native y = a ∘ b (native/tensor.c); kind 0 add, 1 sub, 2 mul, 3 div; y may be a. */
export type NativeBinarySame = (
  kind: number,
  a: Float32Array,
  b: Float32Array,
  y: Float32Array,
  n: number,
) => void;

/** Below this many elements the native call costs more than the JS loop. */
export const NATIVE_MIN = 4096;
const KIND_CODE: Record<Kind, number> = { add: 0, sub: 1, mul: 2, div: 3 };

export function computeSame(kind: Kind, a: Float32Array, b: Float32Array, y: Float32Array): void {
  const n = y.length;
  if (n >= NATIVE_MIN) {
    const nat = kernelSet("tensor")?.binarySame;
    if (nat) {
      nat(KIND_CODE[kind], a, b, y, n);
      return;
    }
  }
  switch (kind) {
    case "add":
      for (let i = 0; i < n; i++) y[i] = a[i]! + b[i]!;
      break;
    case "sub":
      for (let i = 0; i < n; i++) y[i] = a[i]! - b[i]!;
      break;
    case "mul":
      for (let i = 0; i < n; i++) y[i] = a[i]! * b[i]!;
      break;
    case "div":
      for (let i = 0; i < n; i++) y[i] = a[i]! / b[i]!;
      break;
  }
}

function apply(kind: Kind, x: number, z: number): number {
  return kind === "add" ? x + z : kind === "sub" ? x - z : kind === "mul" ? x * z : x / z;
}

function compute(
  kind: Kind,
  a: Float32Array,
  b: Float32Array,
  la: Layout,
  lb: Layout,
  y: Float32Array,
): void {
  if (la === "same" && lb === "same") {
    computeSame(kind, a, b, y);
    return;
  }
  const n = y.length;
  if (la === "same" && typeof lb === "number") {
    // the common case: x ∘ (block repeated along leading axes)
    for (let o = 0; o < n; o += lb)
      for (let j = 0; j < lb; j++) y[o + j] = apply(kind, a[o + j]!, b[j]!);
    return;
  }
  for (let i = 0; i < n; i++) y[i] = apply(kind, at(a, la, i), at(b, lb, i));
}

/** Sum g (laid out as the output) back onto an operand of `size` elements. */
function reduceLayout(g: Float32Array, lay: Layout, size: number): Float32Array {
  if (lay === "same") return g;
  if (typeof lay === "number") {
    const r = allocF32(size);
    for (let o = 0; o < g.length; o += lay) for (let j = 0; j < lay; j++) r[j]! += g[o + j]!;
    return r;
  }
  return reduceTo(g, lay, size);
}

function binary(kind: Kind, a: Tensor, b: Tensor): Tensor {
  const shape = broadcastShape(a.shape, b.shape, kind);
  const la = layoutOf(a.shape, shape);
  const lb = layoutOf(b.shape, shape);
  const y = allocF32Uninit(sizeOf(shape)); // compute writes every element
  compute(kind, a.data, b.data, la, lb, y);
  return record1(kind, [a, b], y, shape, ([g], needs) => {
    const gy = g!;
    const n = gy.length;
    let ga: Float32Array | null = null;
    let gb: Float32Array | null = null;
    if (needs[0]) {
      if (kind === "add" || kind === "sub")
        ga = gy; // shared, never written (engine copies on write)
      else {
        ga = allocF32(n);
        const bd = b.data;
        if (kind === "mul") for (let i = 0; i < n; i++) ga[i] = gy[i]! * at(bd, lb, i);
        else for (let i = 0; i < n; i++) ga[i] = gy[i]! / at(bd, lb, i);
      }
      ga = reduceLayout(ga, la, a.size);
    }
    if (needs[1]) {
      if (kind === "add") gb = gy;
      else {
        gb = allocF32(n);
        const ad = a.data;
        const bd = b.data;
        if (kind === "sub") for (let i = 0; i < n; i++) gb[i] = -gy[i]!;
        else if (kind === "mul") for (let i = 0; i < n; i++) gb[i] = gy[i]! * at(ad, la, i);
        else
          for (let i = 0; i < n; i++) {
            const z = at(bd, lb, i);
            gb[i] = (-gy[i]! * at(ad, la, i)) / (z * z);
          }
      }
      gb = reduceLayout(gb, lb, b.size);
    }
    return [ga, gb];
  });
}

/** a + b, elementwise with trailing-axis broadcasting of b; differentiable. */
export const add = (a: Tensor, b: Tensor): Tensor => binary("add", a, b);
/** a − b, elementwise with trailing-axis broadcasting of b; differentiable. */
export const sub = (a: Tensor, b: Tensor): Tensor => binary("sub", a, b);
/** a · b, elementwise with trailing-axis broadcasting of b; differentiable. */
export const mul = (a: Tensor, b: Tensor): Tensor => binary("mul", a, b);
/** a / b, elementwise with trailing-axis broadcasting of b; differentiable. */
export const div = (a: Tensor, b: Tensor): Tensor => binary("div", a, b);

/** y = s · x (+ c) for constants s, c. */
export function scale(x: Tensor, s: number, c = 0): Tensor {
  const y = allocF32(x.size);
  const xd = x.data;
  for (let i = 0; i < y.length; i++) y[i] = s * xd[i]! + c;
  return record1("scale", [x], y, x.shape, ([g]) => {
    const gx = allocF32(g!.length);
    for (let i = 0; i < gx.length; i++) gx[i] = s * g![i]!;
    return [gx];
  });
}
