/*
 * The three GEMMs of a linear layer, y = x · Wᵀ with x [M, nIn], W [nOut, nIn], ∂y = G [M, nOut]:
 *   y  = X · Wᵀ   [M, nOut]  (+ bias)
 *   ∂x = G · W    [M, nIn]   (summed over the nOut output features)
 *   ∂W = Gᵀ · x   [nOut, nIn] (summed over the M rows)
 * shared by linear, linearSplit and linearMulti. An operand may be stored as pieces (the blocks
 * of a split or multi-weight linear: W's rows, y's and G's columns), which runs the segmented
 * GEMM; plain operands run the plain one with its vec4 and split-K variants. W may be a row
 * block of a larger weight (an operand offset: linearSplit's per-piece path).
 *
 * The gradients are written straight into their destination (`gradTarget`: a leaf's gradient,
 * or the running sum the tape holds; beta 1 adds), so no copy or add pass follows. A split-K
 * GEMM's partials stay unsummed in their destination (`sumInto`, `partialsTarget` in gemm.ts):
 * the consumer reading a fresh tensor next — the norm whose output fed the projection, the
 * residual add after an output projection — adds them up in its own dispatch, and a weight's
 * gradient gathers the partials of all its applications, summed once when the optimiser reads it.
 */
import type { GpuContext } from "../gpu-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import { type GradTarget, gradTarget } from "../tape.js";
import { type GemmOperand, gemm } from "./gemm.js";
import { type GemmAnyOperand, gemmSegmented, isSeg } from "./gemm-segmented.js";

export interface LinearShape {
  M: number;
  nIn: number;
  nOut: number;
}

interface Product {
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
  a: GemmAnyOperand;
  b: GemmAnyOperand;
  c: GemmAnyOperand;
  beta: 0 | 1;
  bias?: GPUBuffer;
  sumInto?: GpuTensor;
}

function product(ctx: GpuContext, p: Product): void {
  const { bias, sumInto, ...call } = p;
  if (isSeg(p.a) || isSeg(p.b) || isSeg(p.c)) {
    if (bias) throw new Error("webgpu linear: a bias with operands stored as pieces");
    gemmSegmented(ctx, { ...call, sumInto });
  } else
    gemm(ctx, {
      ...call,
      a: p.a as GemmOperand,
      b: p.b as GemmOperand,
      c: p.c as GemmOperand,
      bias,
      sumInto,
    });
}

/**
 * y = X · Wᵀ (+ bias) into Y (a tensor's buffer, or y's pieces). `sumInto`: Y's tensor when Y is
 * its whole buffer, so split-K partials may be left for y's consumer.
 */
export function linearForward(
  ctx: GpuContext,
  s: LinearShape,
  X: GemmOperand,
  W: GemmAnyOperand,
  Y: GemmAnyOperand,
  opts: { bias?: GPUBuffer; sumInto?: GpuTensor } = {},
): void {
  product(ctx, {
    transA: false,
    transB: true,
    M: s.M,
    N: s.nOut,
    K: s.nIn,
    a: X,
    b: W,
    c: Y,
    beta: 0,
    ...opts,
  });
}

/** Where a gradient GEMM writes: a target (default: the tape's `gradTarget`) at an offset. */
export interface GradInto extends GradTarget {
  /** Element offset into `out` (a row block of W's gradient). */
  off?: number;
}

function intoGrad(
  ctx: GpuContext,
  into: GradInto,
  call: Omit<Product, "c" | "beta" | "sumInto" | "transB">,
): GpuTensor {
  const off = into.off ?? 0;
  product(ctx, {
    ...call,
    transB: false,
    // its storage as it is: a split-K product adds its partials to ones still pending there (a
    // weight's gradient over its applications, summed once when read); gemm settles otherwise
    c: { buf: into.out.storage, off, ld: call.N },
    beta: into.accumulate ? 1 : 0,
    sumInto: into.out,
  });
  return into.out;
}

/** ∂x = G · W into x's gradient target (or `into`). */
export function linearGradInput(
  x: GpuTensor,
  s: LinearShape,
  G: GemmAnyOperand,
  W: GemmAnyOperand,
  into: GradInto = gradTarget(x),
): GpuTensor {
  return intoGrad(x.ctx, into, { transA: false, M: s.M, N: s.nIn, K: s.nOut, a: G, b: W });
}

/** ∂W = Gᵀ · x into W's gradient target (or `into`; X: x as a GEMM operand). */
export function linearGradWeight(
  w: GpuTensor,
  s: LinearShape,
  G: GemmAnyOperand,
  X: GemmOperand,
  into: GradInto = gradTarget(w),
): GpuTensor {
  return intoGrad(w.ctx, into, { transA: true, M: s.nOut, N: s.nIn, K: s.M, a: G, b: X });
}
