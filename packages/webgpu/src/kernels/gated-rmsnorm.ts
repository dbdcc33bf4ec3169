/*
 * Gated grouped RMSNorm (docs/model.md §3.6), one workgroup per (row, group):
 *   v = x ⊙ silu(z);  per row and group of gs = Di/G channels r = 1/sqrt(mean(v_g²) + eps);
 *   y = v·r ⊙ weight                                   x, z [rows, Di], weight [Di] → y, rinv [rows·G]
 * Backward (same grid), with ĝ = gy ⊙ weight and v̂ = v·r:
 *   ∂v = r·(ĝ − v̂·mean(ĝ ⊙ v̂)),  ∂x = ∂v ⊙ silu(z),  ∂z = ∂v ⊙ x ⊙ silu'(z)
 *   ∂weight = Σ_rows gy ⊙ v̂   (a column sum, ops/column-sum.ts, whose first stage runs in the
 *                              backward's dispatch: the workgroups past the (row, group) ones)
 * The group's sums are tree reductions in workgroup memory (fixed order: deterministic).
 */
import { defineKernel } from "../kernel-def.js";
import { columnRoleWgsl } from "./column-sum.js";
import { groupSumWgsl } from "./wgsl-group-sum.js";
import { WGSL_MATH } from "./wgsl-math.js";

export const RMS_GROUP = 128;

const reduce = groupSumWgsl(RMS_GROUP);

const entry = (withColumnSum: boolean) => `@compute @workgroup_size(${RMS_GROUP})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_id) li: vec3u) {
  let item = wg.x + wg.y * ng.x;
  let lid = li.x;
  if (item >= p.rows * p.G) {${withColumnSum ? "\n    if (item - p.rows * p.G < p.colJobs) { columnRole(item - p.rows * p.G, lid); }" : ""}
    return;
  }
  let gs = p.Di / p.G;
  let o = (item / p.G) * p.Di + (item % p.G) * gs;
  let wo = (item % p.G) * gs;`;

export const gatedRmsnormKernel = defineKernel({
  name: "gatedRmsnorm",
  params: { rows: "u32", Di: "u32", G: "u32", eps: "f32" },
  buffers: { x: "read", z: "read", weight: "read", y: "rw", rinv: "rw" },
  body: `${WGSL_MATH}${reduce}
${entry(false)}
  var ss = 0.0;
  for (var j = lid; j < gs; j += ${RMS_GROUP}u) {
    let v = x[o + j] * silu(z[o + j]);
    ss += v * v;
  }
  let r = 1.0 / sqrt(groupSum(lid, ss) / f32(gs) + p.eps);
  for (var j = lid; j < gs; j += ${RMS_GROUP}u) {
    y[o + j] = x[o + j] * silu(z[o + j]) * r * weight[wo + j];
  }
  if (lid == 0u) { rinv[item] = r; }
}`,
});

/** ∂weight[c] = Σ_r gy[r, c]·x·silu(z)·rinv[r, group of c] (c over p.cols = Di). */
const GRAD_WEIGHT_TERM =
  "gy[r * p.cols + c] * x[r * p.cols + c] * silu(z[r * p.cols + c]) * rinv[r * p.G + c / (p.cols / p.G)]";

/**
 * The backward over (row, group) items with ∂weight's column sum (stage 1) in the same
 * dispatch; p.rows = 0 leaves only the column sum (x and z need no gradient).
 */
export const gatedRmsnormBackwardKernel = defineKernel({
  name: "gatedRmsnormBackward",
  params: {
    rows: "u32",
    Di: "u32",
    G: "u32",
    colRows: "u32",
    cols: "u32",
    colGroups: "u32",
    acc: "u32",
    colJobs: "u32",
  },
  buffers: {
    x: "read",
    z: "read",
    weight: "read",
    rinv: "read",
    gy: "read",
    gx: "rw",
    gz: "rw",
    partial: "rw",
  },
  body: `${WGSL_MATH}${reduce}${columnRoleWgsl(RMS_GROUP, GRAD_WEIGHT_TERM)}
${entry(true)}
  let r = rinv[item];
  var dot = 0.0;
  for (var j = lid; j < gs; j += ${RMS_GROUP}u) {
    dot += gy[o + j] * weight[wo + j] * x[o + j] * silu(z[o + j]) * r;
  }
  let m = groupSum(lid, dot) / f32(gs);
  for (var j = lid; j < gs; j += ${RMS_GROUP}u) {
    let zv = z[o + j];
    let xv = x[o + j];
    let vh = xv * silu(zv) * r;
    let gv = r * (gy[o + j] * weight[wo + j] - vh * m);
    gx[o + j] = gv * silu(zv);
    gz[o + j] = gv * xv * siluGrad(zv);
  }
}`,
});
