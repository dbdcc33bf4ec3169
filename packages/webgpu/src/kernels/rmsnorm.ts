/*
 * RMSNorm over the last axis (docs/model.md §2), one workgroup per row:
 *   forward:  r = 1/sqrt(mean(x²) + eps),  y = x · r ⊙ w           (r kept per row)
 *   backward: x̂ = x·r, ĝ = g ⊙ w,  ∂x = r·(ĝ − x̂·mean(ĝ ⊙ x̂)),
 *             ∂w = Σ_rows g ⊙ x̂  (a column sum whose first stage runs in the same dispatch:
 *             the workgroups past the rows', `defineRowKernelWithColumnSum`)
 * Shapes: x [rows, D], w [D], r [rows]. The backward reads g through `gAt`, which also takes g
 * still left as a split-K GEMM's partial sums (wgsl-partial-sum.ts: the ∂x of the projections
 * this norm feeds), so their sum needs no dispatch of its own.
 */

import { defineRowKernel, defineRowKernelWithColumnSum, ROW_GROUP } from "./row-reduce.js";
import { partialSumParams, partialSumWgsl } from "./wgsl-partial-sum.js";

export const rmsnormForwardKernel = defineRowKernel({
  name: "rmsnorm_forward",
  params: { rows: "u32", D: "u32", eps: "f32" },
  buffers: { x: "read", w: "read", rinv: "rw", y: "rw" },
  main: `
  let o = row * p.D;
  var ss = 0.0;
  for (var j = li; j < p.D; j += ${ROW_GROUP}u) { ss += x[o + j] * x[o + j]; }
  let r = 1.0 / sqrt(rowSum(ss, li) / f32(p.D) + p.eps);
  if (li == 0u) { rinv[row] = r; }
  for (var j = li; j < p.D; j += ${ROW_GROUP}u) { y[o + j] = x[o + j] * r * w[j]; }
}`,
});

export const rmsnormBackwardKernel = defineRowKernelWithColumnSum({
  name: "rmsnorm_backward",
  params: { rows: "u32", D: "u32", wantX: "u32", accX: "u32", ...partialSumParams("g") },
  buffers: { x: "read", w: "read", rinv: "read", g: "read", gx: "rw" },
  helpers: [partialSumWgsl("gAt", "g")],
  colTerm: "gAt(r * p.cols + c) * (x[r * p.cols + c] * rinv[r])",
  main: `
  if (p.wantX == 0u) { return; }
  let o = row * p.D;
  let r = rinv[row];
  var dot = 0.0;
  for (var j = li; j < p.D; j += ${ROW_GROUP}u) {
    let xh = x[o + j] * r;
    dot += gAt(o + j) * w[j] * xh;
  }
  let m = rowSum(dot, li) / f32(p.D);
  for (var j = li; j < p.D; j += ${ROW_GROUP}u) {
    let v = r * (gAt(o + j) * w[j] - x[o + j] * r * m);
    // accX: ∂x added to the running sum of x's gradient (the residual stream's)
    if (p.accX != 0u) { gx[o + j] = gx[o + j] + v; } else { gx[o + j] = v; }
  }
}`,
});
