/*
 * Log-softmax and cross-entropy over the last axis (max-shifted), one workgroup per row for the
 * row reductions, mirroring @loop/tensor's loss.ts:
 *   logSoftmax:  y_j = x_j − lse,  lse = m + ln Σ_k e^{x_k − m};   ∂x = g − e^{y} · Σ g
 *   CE per row:  ℓ = lse − x_t (lse kept), 0 where t = ignore;     ∂x_j = g·(e^{x_j − lse} − [j = t])
 * A target outside [0, V) that is not the ignore index gives NaN (the CPU op throws; the GPU op
 * does not read targets back).
 * Shapes: logits [rows, V], targets i32 [rows], lse/ℓ [rows].
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { defineRowKernel, ROW_GROUP, ROW_LSE_WGSL } from "./row-reduce.js";
import { QUIET_NAN_WGSL } from "./wgsl-nan.js";

/** m + ln Σ e^{x − m} of the row at offset o (every thread gets it). */
export const logSoftmaxForwardKernel = defineRowKernel({
  name: "log_softmax_forward",
  params: { rows: "u32", V: "u32" },
  buffers: { x: "read", y: "rw" },
  helpers: [ROW_LSE_WGSL],
  main: `
  let o = row * p.V;
  let lse = rowLse(o, li);
  for (var j = li; j < p.V; j += ${ROW_GROUP}u) { y[o + j] = x[o + j] - lse; }
}`,
});

export const logSoftmaxBackwardKernel = defineRowKernel({
  name: "log_softmax_backward",
  params: { rows: "u32", V: "u32" },
  buffers: { y: "read", g: "read", gx: "rw" },
  main: `
  let o = row * p.V;
  var s = 0.0;
  for (var j = li; j < p.V; j += ${ROW_GROUP}u) { s += g[o + j]; }
  let gs = rowSum(s, li);
  for (var j = li; j < p.V; j += ${ROW_GROUP}u) { gx[o + j] = g[o + j] - exp(y[o + j]) * gs; }
}`,
});

export const ceForwardKernel = defineRowKernel({
  name: "cross_entropy_forward",
  params: { rows: "u32", V: "u32", ignore: "i32" },
  buffers: { x: "read", t: "read:i32", lse: "rw", loss: "rw" },
  helpers: [QUIET_NAN_WGSL, ROW_LSE_WGSL],
  main: `
  let o = row * p.V;
  let l = rowLse(o, li);
  if (li != 0u) { return; }
  let tr = t[row];
  lse[row] = l;
  if (tr == p.ignore) { loss[row] = 0.0; }
  else if (tr < 0 || u32(tr) >= p.V) { loss[row] = quietNan(); }
  else { loss[row] = l - x[o + u32(tr)]; }
}`,
});

export const CE_GROUP = 256;
export const ceBackwardKernel = defineKernel({
  name: "cross_entropy_backward",
  params: { rows: "u32", V: "u32", ignore: "i32" },
  buffers: { x: "read", t: "read:i32", lse: "read", g: "read", gx: "rw" },
  body: `${QUIET_NAN_WGSL}
${flatEntry(CE_GROUP, "p.rows * p.V", "f")}
  let row = f / p.V;
  let j = f % p.V;
  let tr = t[row];
  if (tr == p.ignore) { gx[f] = 0.0; return; }
  if (tr < 0 || u32(tr) >= p.V) { gx[f] = quietNan(); return; }
  var d = exp(x[f] - lse[row]);
  if (j == u32(tr)) { d -= 1.0; }
  gx[f] = g[row] * d;
}`,
});
