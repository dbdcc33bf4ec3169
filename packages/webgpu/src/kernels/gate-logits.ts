/*
 * Gate logits (docs/exit-gate.md "Gate and exit distribution"), as @loop/exit-gate's gateLogits:
 *   a[r, m] = Σ_d w[d]·x_r[m, d] + bias     readouts x_r [M, D] (one dispatch per loop step r,
 *                                           written at a[off + m], off = r·M)
 * Backward: ∂x_r[m, d] = g[off + m]·w[d] (gateInput);  ∂w[d] = Σ_{r,m} g[r, m]·x_r[m, d] as
 * partial sums over chunks of CHUNK rows (gateWeightPartial, part[(r·chunks + c)·D + d]) summed
 * in a fixed order (ops/column-sum.ts);  ∂bias = Σ g (likewise). All sums in a fixed order.
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { defineRowKernel, ROW_GROUP } from "./row-reduce.js";

export const GATE_CHUNK = 256;
export const GATE_COLS = 64;
export const GATE_EW = 256;

/** One workgroup per row (grid folded over x and y for M > 65535). */
export const gateDotKernel = defineRowKernel({
  name: "gate/dot",
  params: { rows: "u32", D: "u32", off: "u32" },
  buffers: { x: "read", w: "read", bias: "read", a: "rw" },
  main: `
  var acc = 0.0;
  for (var d = li; d < p.D; d += ${ROW_GROUP}u) { acc += w[d] * x[row * p.D + d]; }
  let total = rowSum(acc, li);
  if (li == 0u) { a[p.off + row] = bias[0] + total; }
}`,
});

export const gateInputKernel = defineKernel({
  name: "gate/input-grad",
  params: { n: "u32", D: "u32", off: "u32" },
  buffers: { g: "read", w: "read", gx: "rw" },
  body: `
${flatEntry(GATE_EW)}
  gx[i] = g[p.off + i / p.D] * w[i % p.D];
}`,
});

/** Workgroups (ceil(D/64), chunks); thread d of chunk c sums its CHUNK rows in order. */
export const gateWeightPartialKernel = defineKernel({
  name: "gate/weight-partial",
  params: { M: "u32", D: "u32", off: "u32", partRow: "u32" },
  buffers: { g: "read", x: "read", part: "rw" },
  body: `
@compute @workgroup_size(${GATE_COLS})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let d = gid.x;
  if (d >= p.D) { return; }
  let m0 = wid.y * ${GATE_CHUNK}u;
  let m1 = min(p.M, m0 + ${GATE_CHUNK}u);
  var acc = 0.0;
  for (var m = m0; m < m1; m++) { acc += g[p.off + m] * x[m * p.D + d]; }
  part[(p.partRow + wid.y) * p.D + d] = acc;
}`,
});
