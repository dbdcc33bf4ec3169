/*
 * silu fused with a split of the last axis (docs/model.md §3.2–3.3), one dispatch per piece:
 *   forward:  y_k[r, j] = silu(x[r, o_k + j])                         (x [rows, W], y_k [rows, w_k])
 *   backward: ∂x[r, o_k + j] = g_k[r, j] · σ(1 + x(1 − σ)), σ = σ(x[r, o_k + j]); zeros for a piece
 *             without gradient
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { WGSL_MATH } from "./wgsl-math.js";

export const SILU_SPLIT_GROUP = 256;
const head = `${flatEntry(SILU_SPLIT_GROUP, "p.rows * p.w", "f")}
  let r = f / p.w;
  let xi = r * p.ldx + p.off + f % p.w;`;

export const siluSplitForwardKernel = defineKernel({
  name: "silu_split_forward",
  params: { rows: "u32", w: "u32", off: "u32", ldx: "u32" },
  buffers: { x: "read", y: "rw" },
  body: `${WGSL_MATH}
${head}
  let v = x[xi];
  y[f] = v * sigmoid(v);
}`,
});

export const siluSplitBackwardKernel = defineKernel({
  name: "silu_split_backward",
  params: { rows: "u32", w: "u32", off: "u32", ldx: "u32", hasG: "u32" },
  buffers: { x: "read", g: "read", gx: "rw" },
  body: `${WGSL_MATH}
${head}
  if (p.hasG == 0u) { gx[xi] = 0.0; return; }
  gx[xi] = g[f] * siluGrad(x[xi]);
}`,
});
