/*
 * The mean of x over the positions whose target is not the ignore index, in a fixed order (no
 * atomics: the same bits every run), as @loop/tensor's maskedMean:
 *   N = #{r : t_r ≠ ignore},  out[0] = Σ_{t_r ≠ ignore} x_r / N  (NaN when N = 0),  count[0] = N
 *   ∂x_r = g / N where t_r ≠ ignore, else 0 (0 everywhere when N = 0)
 * Shapes: x [n] (any shape of n elements), t i32 [n], out and count [1]. The forward is one
 * workgroup: thread l sums r ≡ l (mod ROW_GROUP) in order, then the row reduction's fixed tree;
 * the backward is a flat grid over n.
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { ROW_GROUP, ROW_REDUCE_WGSL } from "./row-reduce.js";
import { QUIET_NAN_WGSL } from "./wgsl-nan.js";

export const MASKED_MEAN_GROUP = 256;

export const maskedMeanKernel = defineKernel({
  name: "masked_mean",
  params: { n: "u32", ignore: "i32" },
  buffers: { x: "read", t: "read:i32", out: "rw", count: "rw" },
  body: `${ROW_REDUCE_WGSL}
${QUIET_NAN_WGSL}
@compute @workgroup_size(${ROW_GROUP})
fn main(@builtin(local_invocation_index) li: u32) {
  var s = 0.0;
  var c = 0.0;
  for (var r = li; r < p.n; r += ${ROW_GROUP}u) {
    if (t[r] != p.ignore) { s += x[r]; c += 1.0; }
  }
  let total = rowSum(s, li);
  let N = rowSum(c, li);
  if (li != 0u) { return; }
  count[0] = N;
  if (N == 0.0) { out[0] = quietNan(); } else { out[0] = total / N; }
}`,
});

export const maskedMeanBackwardKernel = defineKernel({
  name: "masked_mean_backward",
  params: { n: "u32", ignore: "i32" },
  buffers: { t: "read:i32", count: "read", g: "read", gx: "rw" },
  body: `${flatEntry(MASKED_MEAN_GROUP, "p.n", "r")}
  if (t[r] == p.ignore || count[0] == 0.0) { gx[r] = 0.0; } else { gx[r] = g[0] / count[0]; }
}`,
});
