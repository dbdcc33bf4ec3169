/*
 * Per-token cross-entropy of one loop step's logits, written into row r of a step-major [R, M]
 * result (off = r·M), as @loop/tensor's crossEntropyPerToken stacked over steps:
 *   lse_m = ln Σ_v e^{x[m, v]} (max-shifted),  ℓ[off + m] = lse_m − x[m, t_m]  (0 where t_m = −100)
 * One workgroup per row: a strided max, then a strided Σ e^{x − max}, each tree-reduced in a fixed
 * order. lse is kept for the backward:  ∂x[m, v] = g[off + m]·(e^{x[m, v] − lse_m} − [v = t_m]).
 * Targets outside [0, V) are the caller's to rule out (the CPU op checks them; the device cannot
 * without a read-back).
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { defineRowKernel, ROW_LSE_WGSL } from "./row-reduce.js";

export const CE_EW = 256;
const IGNORE = -100;

export const ceRowKernel = defineRowKernel({
  name: "perStepCE/forward",
  params: { rows: "u32", V: "u32", off: "u32" },
  buffers: { x: "read", targets: "read:i32", ce: "rw", lse: "rw" },
  helpers: [ROW_LSE_WGSL],
  main: `
  let o = row * p.V;
  let l = rowLse(o, li);
  if (li == 0u) {
    let t = targets[row];
    lse[p.off + row] = l;
    if (t == ${IGNORE}) { ce[p.off + row] = 0.0; } else { ce[p.off + row] = l - x[o + u32(t)]; }
  }
}`,
});

export const ceBackwardKernel = defineKernel({
  name: "perStepCE/backward",
  params: { n: "u32", V: "u32", off: "u32" },
  buffers: { x: "read", targets: "read:i32", lse: "read", g: "read", gx: "rw" },
  body: `
${flatEntry(CE_EW)}
  let m = i / p.V;
  let t = targets[m];
  if (t == ${IGNORE}) { gx[i] = 0.0; return; }
  var hot = 0.0;
  if (u32(t) == i % p.V) { hot = 1.0; }
  gx[i] = g[p.off + m] * (exp(x[i] - lse[p.off + m]) - hot);
}`,
});
