/**
 * A linear's input under mixed precision: every product reads f16 operands (precision.ts), so x
 * is rounded to f16 once — in the same dispatch as the first weight it multiplies — and that copy,
 * not x, is what the linear's backward reads (∂W = Gᵀ·x16). x itself can then be freed once the
 * forward is done with it (tape.ts `releaseUnkept`): the activations the projections keep for
 * the backward are stored in f16. The numbers are those of rounding x at each product.
 */
import { type GpuTensor, wrapBuffer } from "../gpu-tensor.js";
import { gpuPrecision } from "../precision.js";
import { castToF16, type GemmOperand } from "./gemm.js";

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
 * The span of `n` elements of weight operand `w` rounded to f16 for one product (x too, in the
 * same dispatch, the first time): returns [x's operand, W's]; the caller releases W's buffer
 * after the product.
 */
export function castWithInput(
  inp: F16Input,
  w: GemmOperand,
  n: number,
): [GemmOperand, GemmOperand] {
  const ctx = inp.x.ctx;
  const wSpan = { buf: w.buf, off: w.off ?? 0, n };
  if (inp.operand) {
    const [wb] = castToF16(ctx, [wSpan]);
    return [inp.operand, { buf: wb!, ld: w.ld, f16: true }];
  }
  const [xb, wb] = castToF16(ctx, [{ buf: inp.x.buffer, off: 0, n: inp.x.size }, wSpan]);
  inp.tensor = wrapBuffer(ctx, xb!, Math.ceil(inp.x.size / 2));
  inp.operand = { buf: xb!, ld: inp.ld, f16: true };
  return [inp.operand, { buf: wb!, ld: w.ld, f16: true }];
}
