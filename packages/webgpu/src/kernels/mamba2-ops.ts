/*
 * Two small fused ops of the Mamba-2 mixer (docs/model.md §3.4, §3.5), elementwise over n values:
 *   softplusBias: dt[r, h] = softplus(raw[r, h] + bias[h])       raw [rows, H], bias [H]
 *       backward  ∂raw = g·σ(raw + bias);  ∂bias = Σ_r ∂raw  (column sum, ops/column-sum.ts,
 *                 whose stage 1 also writes ∂raw)
 *   addDSkip:     out[r, h, p] = y + D[h]·x                       y, x [rows, H, P], D [H]
 *       backward  ∂y = g;  ∂x = D[h]·g;  ∂D[h] = Σ_r Σ_p g ⊙ x  (column sum of per-(r, h) dots)
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { columnSumKernel } from "./column-sum.js";
import { WGSL_MATH } from "./wgsl-math.js";

const GROUP = 256;
const head = flatEntry(GROUP);
export const MAMBA2_EW_GROUP = GROUP;

export const softplusBiasKernel = defineKernel({
  name: "softplusBias",
  params: { n: "u32", H: "u32" },
  buffers: { raw: "read", bias: "read", y: "rw" },
  body: `${WGSL_MATH}\n${head}\n  y[i] = softplus(raw[i] + bias[i % p.H]);\n}`,
});

export const softplusBiasBackwardKernel = defineKernel({
  name: "softplusBiasBackward",
  params: { n: "u32", H: "u32" },
  buffers: { raw: "read", bias: "read", g: "read", graw: "rw" },
  body: `${WGSL_MATH}\n${head}\n  graw[i] = g[i] * sigmoid(raw[i] + bias[i % p.H]);\n}`,
});

/**
 * ∂raw and ∂bias by one dispatch: the column sum's stage 1 evaluates each (r, h) once, so its
 * term writes ∂raw[r, h] as it returns it (∂bias[h] = Σ_r ∂raw[r, h]).
 */
export const softplusBiasBackwardGradBias = columnSumKernel({
  name: "softplusBiasBackwardGradBias",
  buffers: { raw: "read", bias: "read", g: "read", graw: "rw" },
  helpers: `${WGSL_MATH}
fn gradRaw(r: u32, c: u32) -> f32 {
  let i = r * p.cols + c;
  let v = g[i] * sigmoid(raw[i] + bias[c]);
  graw[i] = v;
  return v;
}`,
  term: "gradRaw(r, c)",
});

export const addDSkipKernel = defineKernel({
  name: "addDSkip",
  params: { n: "u32", H: "u32", P: "u32" },
  buffers: { y: "read", x: "read", d: "read", out: "rw" },
  body: `${head}\n  out[i] = y[i] + d[(i / p.P) % p.H] * x[i];\n}`,
});

export const addDSkipBackwardKernel = defineKernel({
  name: "addDSkipBackward",
  params: { n: "u32", H: "u32", P: "u32" },
  buffers: { g: "read", d: "read", gx: "rw" },
  body: `${head}\n  gx[i] = d[(i / p.P) % p.H] * g[i];\n}`,
});

/** ∂D[h] = Σ_r Σ_p g[r, h, p]·x[r, h, p] (rows r, columns h; `P` the inner length). */
export const dSkipGradD = columnSumKernel({
  name: "dSkipGradD",
  params: { P: "u32" },
  buffers: { g: "read", x: "read" },
  term: "dskipDot(r, c)",
  helpers: `fn dskipDot(r: u32, c: u32) -> f32 {
  let o = (r * p.cols + c) * p.P;
  var s = 0.0;
  for (var k = 0u; k < p.P; k++) { s += g[o + k] * x[o + k]; }
  return s;
}`,
});
