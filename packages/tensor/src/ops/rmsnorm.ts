/*
 * Fused RMSNorm over the last axis (docs/model.md §2):
 *   y = x · r ⊙ w,  r = 1/sqrt(mean(x²) + eps)
 * Backward, with ĝ = g ⊙ w:  ∂x = r·(ĝ − x̂·mean(ĝ ⊙ x̂)), x̂ = x·r;  ∂w = Σ_rows g ⊙ x̂.
 * Shapes: x [..., D], w [D] → y [..., D].
 */
import { record1 } from "../autograd/node.js";
import { kernelSet } from "../native-registry.js";
import { allocF32, allocF32Uninit, shapeStr, type Tensor } from "../tensor.js";

/**
 * Signatures of the native twins (native/tensor.c, used when registered), which the portable
 * loops below share.
 */
export type RmsnormFwd = (
  x: Float32Array,
  w: Float32Array,
  rows: number,
  D: number,
  eps: number,
  rinv: Float32Array,
  y: Float32Array,
) => void;
export type RmsnormBwd = (
  x: Float32Array,
  w: Float32Array,
  rows: number,
  D: number,
  rinv: Float32Array,
  gy: Float32Array,
  gx: Float32Array | null,
  gw: Float32Array | null,
) => void;

/** RMSNorm over the last axis: x / sqrt(mean(x²) + eps) · w, w [D]; differentiable. */
export function rmsnorm(x: Tensor, w: Tensor, eps = 1e-5): Tensor {
  const D = x.lastDim;
  if (w.rank !== 1 || w.size !== D) {
    throw new Error(
      `rmsnorm: weight must be [${D}] for input ${shapeStr(x.shape)}, got ${shapeStr(w.shape)}`,
    );
  }
  const rows = x.rows;
  const xd = x.data;
  const wd = w.data;
  const y = allocF32Uninit(x.size);
  const rinv = allocF32Uninit(rows);
  const fwd = kernelSet("tensor")?.rmsnormFwd ?? rmsnormRows;
  fwd(xd, wd, rows, D, eps, rinv, y);
  return record1("rmsnorm", [x, w], y, x.shape, ([g], needs) => {
    const gy = g!;
    const gx = needs[0] ? allocF32Uninit(x.size) : null;
    const gw = needs[1] ? allocF32(D) : null;
    const bwd = kernelSet("tensor")?.rmsnormBwd ?? rmsnormRowsBackward;
    bwd(xd, wd, rows, D, rinv, gy, gx, gw);
    return [gx, gw];
  });
}

/** Portable forward loops (the reference for the native twin). */
export const rmsnormRows: RmsnormFwd = (xd, wd, rows, D, eps, rinv, y) => {
  for (let r = 0; r < rows; r++) {
    const o = r * D;
    let ss = 0;
    for (let j = 0; j < D; j++) ss += xd[o + j]! * xd[o + j]!;
    const ri = 1 / Math.sqrt(ss / D + eps);
    rinv[r] = ri;
    for (let j = 0; j < D; j++) y[o + j] = xd[o + j]! * ri * wd[j]!;
  }
};

/** Portable backward loops; gw (zeroed by the caller) accumulates. */
export const rmsnormRowsBackward: RmsnormBwd = (xd, wd, rows, D, rinv, gy, gx, gw) => {
  for (let r = 0; r < rows; r++) {
    const o = r * D;
    const ri = rinv[r]!;
    let dot = 0;
    for (let j = 0; j < D; j++) {
      const xh = xd[o + j]! * ri;
      dot += gy[o + j]! * wd[j]! * xh;
      if (gw) gw[j]! += gy[o + j]! * xh;
    }
    if (gx) {
      const m = dot / D;
      for (let j = 0; j < D; j++) {
        const xh = xd[o + j]! * ri;
        gx[o + j] = ri * (gy[o + j]! * wd[j]! - xh * m);
      }
    }
  }
};
