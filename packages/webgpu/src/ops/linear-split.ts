/*
 * A linear layer whose output features come as separate tensors, mirroring @loop/tensor's
 * linearSplit (the Mamba-2 in_proj output z | xBC | dt): the backend contract's fused composite
 * `linearSplit`, whose definition is split(linear(x, w), widths, -1) (model-ops.test.ts holds it
 * to that on the CPU):
 *   y_k = x · W_kᵀ,  W_k = rows [o_k, o_k + w_k) of W [out, in],  o_k = Σ_{j<k} w_j
 * With fp32 operands and up to three pieces, each of the forward, ∂x and ∂W is one GEMM whose
 * pieces live in their own buffers (gemm-segmented.ts): y_k written where it lives, ∂x = [g_k]·W
 * and ∂W = [g_k]ᵀ·x read from the pieces. Otherwise (mixed precision, a piece without gradient)
 * one GEMM per piece on a row block of W (contiguous in W): ∂x = Σ_k g_k · W_k (added in piece
 * order), ∂W_k = g_kᵀ · x (zeros where a piece has no gradient). No output copy runs either way.
 * The GEMMs are linear-gemms.ts's. Shapes: x [..., in], W [out, in], widths summing to out →
 * y_k [..., w_k].
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { gradTarget, recordGpu } from "../tape.js";
import { fillInPlace } from "./elementwise-plain.js";
import { f16Input, linearForwardF16 } from "./f16-input.js";
import { segmentedGemmOk } from "./gemm-segmented.js";
import { linearForward, linearGradInput, linearGradWeight } from "./linear-gemms.js";

/** x · wᵀ split along the output axis into pieces of `widths`, on the GPU; differentiable. */
export function linearSplit(x: GpuTensor, w: GpuTensor, widths: readonly number[]): GpuTensor[] {
  if (w.rank !== 2)
    throw new Error(`webgpu linearSplit: weight must be [out, in], got [${w.shape.join(",")}]`);
  const [nOut, nIn] = w.shape as [number, number];
  if (x.lastDim !== nIn)
    throw new Error(
      `webgpu linearSplit: input [${x.shape.join(",")}] has last axis ${x.lastDim}, weight expects ${nIn}`,
    );
  const total = widths.reduce((a, b) => a + b, 0);
  if (total !== nOut || widths.some((k) => !Number.isInteger(k) || k < 0))
    throw new Error(
      `webgpu linearSplit: widths [${widths.join(",")}] must be non-negative integers summing to the ${nOut} output features`,
    );
  const ctx = x.ctx;
  const M = x.rows;
  const lead = x.shape.slice(0, -1);
  const offsets = widths.map((_, k) => widths.slice(0, k).reduce((a, b) => a + b, 0));
  const X = { buf: x.buffer, ld: nIn };
  const fused = widths.length <= 3 && segmentedGemmOk(ctx);
  const pieces = (ts: readonly GpuTensor[]) =>
    ts.map((t, k) => ({ buf: t.buffer, ld: Math.max(1, widths[k]!), len: widths[k]! }));
  /** Row block k of W: the weight of piece k. */
  const rowBlock = (k: number) => ({ buf: w.buffer, off: offsets[k]! * nIn, ld: nIn });
  // under mixed precision (never fused) x is rounded to f16 once, with the first block, and
  // that copy is kept for ∂W (ops/f16-input.ts)
  const inp = f16Input(x, nIn);
  if (fused) {
    const outs = widths.map((wk) => emptyLike(ctx, [...lead, wk]));
    const Y = { axis: "cols" as const, pieces: pieces(outs) };
    linearForward(ctx, { M, nIn, nOut }, X, { buf: w.buffer, ld: nIn }, Y);
    recordGpu("linearSplit", [x, w], outs, (gys) => {
      if (gys.some((g, k) => !g && widths[k]! > 0)) return perPieceBackward(gys);
      const G = { axis: "cols" as const, pieces: pieces(gys as GpuTensor[]) };
      const shape = { M, nIn, nOut };
      const W = { buf: w.buffer, ld: nIn };
      return [
        x.requiresGrad ? linearGradInput(x, shape, G, W) : null,
        w.requiresGrad ? linearGradWeight(w, shape, G, X) : null,
      ];
    });
    return outs;
  }
  const outs = widths.map((wk, k) => {
    const y = emptyLike(ctx, [...lead, wk]);
    const Y = { buf: y.buffer, ld: wk };
    const shape = { M, nIn, nOut: wk };
    if (!inp) linearForward(ctx, shape, X, rowBlock(k), Y);
    else if (wk > 0) linearForwardF16(inp, shape, rowBlock(k), Y);
    return y;
  });
  const recorded = recordGpu(
    "linearSplit",
    [x, w],
    outs,
    (gys) => {
      const grads = perPieceBackward(gys);
      inp?.tensor?.dispose();
      return grads;
    },
    inp ? [w] : undefined,
  );
  if (!recorded) inp?.tensor?.dispose();
  return outs;

  function perPieceBackward(gys: readonly (GpuTensor | null)[]): (GpuTensor | null)[] {
    // Both straight into their destinations (a leaf's gradient, a running sum): beta 1 adds.
    let gx: GpuTensor | null = null;
    let gw: GpuTensor | null = null;
    if (x.requiresGrad) {
      const tx = gradTarget(x);
      gx = tx.out;
      let accumulate = tx.accumulate;
      gys.forEach((g, k) => {
        const wk = widths[k]!;
        if (!g || wk === 0) return;
        const G = { buf: g.buffer, ld: wk };
        linearGradInput(x, { M, nIn, nOut: wk }, G, rowBlock(k), { out: gx!, accumulate });
        accumulate = true;
      });
      if (!accumulate) fillInPlace(gx, 0);
    }
    if (w.requiresGrad) {
      const tw = gradTarget(w);
      gw = tw.out;
      const missing = gys.some((g, k) => !g && widths[k]! > 0);
      if (missing && !tw.accumulate) fillInPlace(gw, 0);
      gys.forEach((g, k) => {
        const wk = widths[k]!;
        if (!g || wk === 0) return;
        const G = { buf: g.buffer, ld: wk };
        const into = { out: gw!, accumulate: tw.accumulate, off: offsets[k]! * nIn };
        linearGradWeight(w, { M, nIn, nOut: wk }, G, inp?.operand ?? X, into);
      });
    }
    return [gx, gw];
  }
}
