/**
 * Broadcasting binary ops: add, sub, mul, div.
 *   add: y = a + b   ∂a = g, ∂b = g      sub: y = a − b   ∂a = g, ∂b = −g
 *   mul: y = a·b     ∂a = g·b, ∂b = g·a  div: y = a/b     ∂a = g/b, ∂b = −g·a/b²
 * Gradients of broadcast operands are summed back to their shape.
 */
import { record1 } from "../autograd/node.js";
import { allocF32, type Tensor } from "../tensor.js";
import { broadcastIndex, broadcastShape, reduceTo } from "./broadcast.js";

type Kind = "add" | "sub" | "mul" | "div";

function compute(
  kind: Kind,
  a: Float32Array,
  b: Float32Array,
  ia: Int32Array | null,
  ib: Int32Array | null,
  y: Float32Array,
): void {
  const n = y.length;
  if (ia === null && ib === null) {
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
    return;
  }
  for (let i = 0; i < n; i++) {
    const x = a[ia ? ia[i]! : i]!;
    const z = b[ib ? ib[i]! : i]!;
    y[i] = kind === "add" ? x + z : kind === "sub" ? x - z : kind === "mul" ? x * z : x / z;
  }
}

function binary(kind: Kind, a: Tensor, b: Tensor): Tensor {
  const shape = broadcastShape(a.shape, b.shape, kind);
  const ia = broadcastIndex(a.shape, shape);
  const ib = broadcastIndex(b.shape, shape);
  const y = allocF32(ia === null && ib === null ? a.size : ia ? ia.length : ib!.length);
  compute(kind, a.data, b.data, ia, ib, y);
  return record1(kind, [a, b], y, shape, ([g], needs) => {
    const gy = g!;
    const n = gy.length;
    let ga: Float32Array | null = null;
    let gb: Float32Array | null = null;
    if (needs[0]) {
      if (kind === "add" || kind === "sub") ga = Float32Array.from(gy);
      else {
        ga = allocF32(n);
        for (let i = 0; i < n; i++) {
          const z = b.data[ib ? ib[i]! : i]!;
          ga[i] = kind === "mul" ? gy[i]! * z : gy[i]! / z;
        }
      }
      ga = reduceTo(ga, ia, a.size);
    }
    if (needs[1]) {
      gb = allocF32(n);
      for (let i = 0; i < n; i++) {
        if (kind === "add") gb[i] = gy[i]!;
        else if (kind === "sub") gb[i] = -gy[i]!;
        else {
          const x = a.data[ia ? ia[i]! : i]!;
          if (kind === "mul") gb[i] = gy[i]! * x;
          else {
            const z = b.data[ib ? ib[i]! : i]!;
            gb[i] = (-gy[i]! * x) / (z * z);
          }
        }
      }
      gb = reduceTo(gb, ib, b.size);
    }
    return [ga, gb];
  });
}

export const add = (a: Tensor, b: Tensor): Tensor => binary("add", a, b);
export const sub = (a: Tensor, b: Tensor): Tensor => binary("sub", a, b);
export const mul = (a: Tensor, b: Tensor): Tensor => binary("mul", a, b);
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
