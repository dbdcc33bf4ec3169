/**
 * The two GEMMs of a linear layer's backward, y = x · Wᵀ with x [M, nIn], W [nOut, nIn],
 * ∂y = G [M, nOut]:
 *   ∂x = G · W    [M, nIn]   (summed over the nOut output features)
 *   ∂W = Gᵀ · x   [nOut, nIn] (summed over the M rows)
 * each written straight into its destination (`gradTarget`: a leaf's gradient, or the running
 * sum the tape holds; beta 1 adds), so no copy or add pass follows. An operand stored as pieces
 * (the blocks of a split or multi-weight linear) runs the segmented GEMM, plain operands the
 * plain one with its vec4 and split-K variants. A fresh destination (nothing to add to) keeps a
 * split-K GEMM's partials unsummed (`sumInto`): the consumer reading the gradient next — the
 * norm whose output fed the projection — adds them up in its own dispatch.
 */
import type { GpuTensor } from "../gpu-tensor.js";
import { gradTarget } from "../tape.js";
import { type GemmOperand, gemm } from "./gemm.js";
import { type GemmAnyOperand, gemmSegmented, isSeg } from "./gemm-segmented.js";

export interface LinearShape {
  M: number;
  nIn: number;
  nOut: number;
}

function run(
  x: GpuTensor,
  call: { M: number; N: number; K: number; transA: boolean; a: GemmAnyOperand; b: GemmAnyOperand },
): GpuTensor {
  const t = gradTarget(x);
  const c = { buf: t.out.buffer, ld: call.N };
  const beta = t.accumulate ? 1 : 0;
  const sumInto = t.accumulate ? undefined : t.out;
  if (isSeg(call.a) || isSeg(call.b))
    gemmSegmented(x.ctx, { ...call, transB: false, c, beta, sumInto });
  else
    gemm(x.ctx, {
      ...call,
      transB: false,
      a: call.a as GemmOperand,
      b: call.b as GemmOperand,
      c,
      beta,
      sumInto,
    });
  return t.out;
}

/** ∂x = G · W into x's gradient target. */
export function linearGradInput(
  x: GpuTensor,
  s: LinearShape,
  G: GemmAnyOperand,
  W: GemmAnyOperand,
): GpuTensor {
  return run(x, { transA: false, M: s.M, N: s.nIn, K: s.nOut, a: G, b: W });
}

/** ∂W = Gᵀ · x into W's gradient target (X: x as a GEMM operand). */
export function linearGradWeight(
  w: GpuTensor,
  s: LinearShape,
  G: GemmAnyOperand,
  X: GemmOperand,
): GpuTensor {
  return run(w, { transA: true, M: s.nOut, N: s.nIn, K: s.M, a: G, b: X });
}
