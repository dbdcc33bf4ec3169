/*
 * A linear layer whose output features come as separate tensors (docs/model.md §3.1: the Mamba-2
 * in_proj output is z | xBC | dt):
 *   y_k = x · W_kᵀ,  W_k = rows [o_k, o_k + w_k) of W [out, in],  o_k = Σ_{j<k} w_j
 * equal to split(linear(x, W), widths) without the output copy: each piece is its own GEMM on a
 * row block of W (contiguous in W). Backward: ∂x = Σ_k g_k · W_k,  ∂W_k = g_kᵀ · x.
 * Shapes: x [..., in], W [out, in], widths summing to out → y_k [..., w_k].
 */
import { record } from "../autograd/node.js";
import { gemm } from "../kernels/gemm.js";
import { allocF32, allocF32Uninit, shapeStr, type Tensor } from "../tensor.js";

/**
 * x · wᵀ split along the output axis into pieces of `widths` (one GEMM for several projections);
 * differentiable.
 */
export function linearSplit(x: Tensor, w: Tensor, widths: readonly number[]): Tensor[] {
  if (w.rank !== 2) {
    throw new Error(`linearSplit: weight must be [out, in], got ${shapeStr(w.shape)}`);
  }
  const [nOut, nIn] = w.shape as [number, number];
  if (x.lastDim !== nIn) {
    throw new Error(
      `linearSplit: input ${shapeStr(x.shape)} has last axis ${x.lastDim}, weight expects ${nIn}`,
    );
  }
  const total = widths.reduce((a, b) => a + b, 0);
  if (total !== nOut || widths.some((k) => !Number.isInteger(k) || k < 0)) {
    throw new Error(
      `linearSplit: widths [${widths.join(",")}] must be non-negative integers summing to the ${nOut} output features`,
    );
  }
  const M = x.rows;
  const lead = x.shape.slice(0, -1);
  const offsets = widths.map((_, k) => widths.slice(0, k).reduce((a, b) => a + b, 0));
  const outs = widths.map((wk, k) => {
    const y = allocF32Uninit(M * wk); // beta = 0 writes all of it
    gemm(false, true, M, wk, nIn, 1, x.data, 0, nIn, w.data, offsets[k]! * nIn, nIn, 0, y, 0, wk);
    return { data: y, shape: [...lead, wk] };
  });
  return record("linearSplit", [x, w], outs, (gys, needs) => {
    let gx: Float32Array | null = null;
    let gw: Float32Array | null = null;
    if (needs[0]) {
      const present = gys.some((g, k) => g && widths[k]! > 0);
      gx = present ? allocF32Uninit(x.size) : allocF32(x.size);
      let beta = 0;
      gys.forEach((g, k) => {
        const wk = widths[k]!;
        if (!g || wk === 0) return;
        gemm(
          false,
          false,
          M,
          nIn,
          wk,
          1,
          g,
          0,
          wk,
          w.data,
          offsets[k]! * nIn,
          nIn,
          beta,
          gx!,
          0,
          nIn,
        );
        beta = 1;
      });
    }
    if (needs[1]) {
      gw = allocF32Uninit(w.size);
      const gwd = gw;
      gys.forEach((g, k) => {
        const wk = widths[k]!;
        const off = offsets[k]! * nIn;
        if (wk === 0) return;
        if (!g) gwd.fill(0, off, off + wk * nIn);
        else gemm(true, false, wk, nIn, M, 1, g, 0, wk, x.data, 0, nIn, 0, gwd, off, nIn);
      });
    }
    return [gx, gw];
  });
}
