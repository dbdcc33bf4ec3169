/*
 * A linear's input under mixed precision: every product reads f16 operands (precision.ts), so x
 * is rounded to f16 once — in the same dispatch as the first weight it multiplies — and that copy,
 * not x, is what the linear's backward reads (∂W = Gᵀ·x16). x itself can then be freed once the
 * forward is done with it (tape.ts `releaseUnkept`): the activations the projections keep for
 * the backward are stored in f16. The numbers are those of rounding x at each product.
 */
import { type GpuTensor, wrapBuffer } from "../gpu-tensor.js";
import { gpuPrecision } from "../precision.js";
import { castToF16, type GemmOperand } from "./gemm.js";
import type { GemmAnyOperand } from "./gemm-segmented.js";
import { type LinearShape, linearForward } from "./linear-gemms.js";

export interface F16Input {
  readonly x: GpuTensor;
  readonly ld: number;
  /** x's f16 copy (two values per word) once the first weight was cast, and its operand. */
  tensor: GpuTensor | null;
  operand: GemmOperand | null;
}

/** x's f16 input under mixed precision (rounded at its first product); null under fp32. */
export function f16Input(x: GpuTensor, ld: number): F16Input | null {
  if (gpuPrecision(x.ctx).precision !== "mixed") return null;
  return { x, ld, tensor: null, operand: null };
}

/**
 * y = x · Wᵀ into Y for weight operand `w` (`shape.nOut` rows of `shape.nIn`) under mixed
 * precision: W rounded to f16 for this product, x too (in the same dispatch) the first time.
 * Returns x's f16 operand, which the linear's backward reads for ∂W.
 */
export function linearForwardF16(
  inp: F16Input,
  shape: LinearShape,
  w: GemmOperand,
  Y: GemmAnyOperand,
  opts: { bias?: GPUBuffer; sumInto?: GpuTensor } = {},
): GemmOperand {
  const ctx = inp.x.ctx;
  const wSpan = { buf: w.buf, off: w.off ?? 0, n: shape.nOut * shape.nIn };
  let wb: GPUBuffer;
  if (inp.operand) [wb] = castToF16(ctx, [wSpan]) as [GPUBuffer];
  else {
    const [xb, b] = castToF16(ctx, [{ buf: inp.x.buffer, off: 0, n: inp.x.size }, wSpan]);
    inp.tensor = wrapBuffer(ctx, xb!, Math.ceil(inp.x.size / 2));
    inp.operand = { buf: xb!, ld: inp.ld, f16: true };
    wb = b!;
  }
  linearForward(ctx, shape, inp.operand, { buf: wb, ld: w.ld, f16: true }, Y, opts);
  // the product is enqueued: W's copy goes back to the pool after it has run
  ctx.release(wb);
  return inp.operand;
}
