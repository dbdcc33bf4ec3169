/*
 * Broadcasting binary ops on GPU tensors, mirroring @loop/tensor's add, sub, mul, div:
 *   add: y = a + b   ∂a = g, ∂b = g      sub: y = a − b   ∂a = g, ∂b = −g
 *   mul: y = a·b     ∂a = g·b, ∂b = g·a  div: y = a/b     ∂a = g/b, ∂b = −(g/b)·y
 * Gradients of broadcast operands are summed back to their shape (ops/broadcast.ts).
 * `binaryOp` is the backend contract's kernel (`TensorOps.binary`): b of a's shape or of a
 * trailing part of it, the output of a's shape.
 */
import type { BinaryKind } from "@loop/tensor";
import type { GpuTensor } from "../gpu-tensor.js";
import type { BinaryFn } from "../kernels/broadcast.js";
import { recordGpu } from "../tape.js";
import { broadcastBinary, reduceToShape } from "./broadcast.js";
import { add as addSame } from "./elementwise.js";

type Kind = "add" | "sub" | "mul" | "div";

function binary(kind: Kind, a: GpuTensor, b: GpuTensor): GpuTensor {
  const y = broadcastBinary(kind, a, b, kind);
  recordGpu(kind, [a, b], [y], ([g]) => {
    const gy = g!;
    const full = (fn: BinaryFn, u: GpuTensor, v: GpuTensor) => broadcastBinary(fn, u, v, kind);
    let ga: GpuTensor | null = null;
    let gb: GpuTensor | null = null;
    if (a.requiresGrad || (kind === "div" && b.requiresGrad)) {
      const gaFull = kind === "mul" ? full("mul", gy, b) : kind === "div" ? full("div", gy, b) : gy;
      if (a.requiresGrad) ga = reduceToShape(gaFull, a.shape);
      if (kind === "div" && b.requiresGrad) gb = reduceToShape(full("negmul", gaFull, y), b.shape);
    }
    if (b.requiresGrad && kind !== "div") {
      if (kind === "add") gb = reduceToShape(gy, b.shape);
      else if (kind === "sub") gb = reduceToShape(gy, b.shape, { alpha: -1 });
      else gb = reduceToShape(full("mul", gy, a), b.shape);
    }
    return [ga, gb];
  });
  return y;
}

/** a + b with broadcasting (equal shapes take the plain elementwise kernel). */
export function add(a: GpuTensor, b: GpuTensor): GpuTensor {
  if (a.shape.join() === b.shape.join()) return addSame(a, b);
  return binary("add", a, b);
}
/** a − b on the GPU, elementwise with trailing-axis broadcasting; differentiable. */
export const sub = (a: GpuTensor, b: GpuTensor): GpuTensor => binary("sub", a, b);
/** a · b on the GPU, elementwise with trailing-axis broadcasting; differentiable. */
export const mul = (a: GpuTensor, b: GpuTensor): GpuTensor => binary("mul", a, b);
/** a / b on the GPU, elementwise with trailing-axis broadcasting; differentiable. */
export const div = (a: GpuTensor, b: GpuTensor): GpuTensor => binary("div", a, b);

const BINARY: Record<BinaryKind, (a: GpuTensor, b: GpuTensor) => GpuTensor> = { add, sub, mul };

/**
 * The contract's binary kernel: a (+, −, ·) b with b of a's shape or of a trailing part of it
 * (broadcast over a's leading axes; ∂b summed over them). Other broadcasts are refused: the
 * output must have a's shape on every backend.
 */
export function binaryOp(kind: BinaryKind, a: GpuTensor, b: GpuTensor): GpuTensor {
  const fn = BINARY[kind];
  if (!fn) throw new Error(`webgpu binary: unknown kind "${kind}" (add, sub, mul)`);
  const tail = a.shape.slice(a.rank - b.rank);
  if (b.rank > a.rank || tail.some((d, i) => d !== b.shape[i]))
    throw new Error(
      `webgpu binary ${kind}: b [${b.shape.join(",")}] must be a's shape [${a.shape.join(",")}] or a trailing part of it`,
    );
  return fn(a, b);
}
