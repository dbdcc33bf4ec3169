/*
 * Two small fused ops of the Mamba-2 mixer (docs/model.md §3.4, §3.5), elementwise over n values:
 *   softplusBias: dt[r, h] = clamp(softplus(raw[r, h] + bias[h]), lo, hi)  raw [rows, H], bias [H]
 *       backward  ∂raw = g·σ(raw + bias)·[lo ≤ softplus(raw + bias) ≤ hi];  ∂bias = Σ_r ∂raw
 *                 (column sum, ops/column-sum.ts, whose stage 1 also writes ∂raw)
 *       lo, hi: the time_step_limit ([0, largest f32] when unlimited: the same as no clamp for a
 *       softplus, and no infinity in a uniform, which WGSL implementations may assume absent)
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
  params: { n: "u32", H: "u32", lo: "f32", hi: "f32" },
  buffers: { raw: "read", bias: "read", y: "rw" },
  body: `${WGSL_MATH}\n${head}\n  y[i] = clamp(softplus(raw[i] + bias[i % p.H]), p.lo, p.hi);\n}`,
});

/** ∂raw of one element: g·σ(v), zero where softplus(v) lies outside [lo, hi]. */
const GRAD_RAW = `
fn softplusGrad(v: f32, g: f32) -> f32 {
  let s = softplus(v);
  return select(0.0, g * sigmoid(v), s >= p.lo && s <= p.hi);
}`;

export const softplusBiasBackwardKernel = defineKernel({
  name: "softplusBiasBackward",
  params: { n: "u32", H: "u32", lo: "f32", hi: "f32" },
  buffers: { raw: "read", bias: "read", g: "read", graw: "rw" },
  body: `${WGSL_MATH}${GRAD_RAW}\n${head}\n  graw[i] = softplusGrad(raw[i] + bias[i % p.H], g[i]);\n}`,
});

/**
 * ∂raw and ∂bias by one dispatch: the column sum's stage 1 evaluates each (r, h) once, so its
 * term writes ∂raw[r, h] as it returns it (∂bias[h] = Σ_r ∂raw[r, h]).
 */
export const softplusBiasBackwardGradBias = columnSumKernel({
  name: "softplusBiasBackwardGradBias",
  params: { lo: "f32", hi: "f32" },
  buffers: { raw: "read", bias: "read", g: "read", graw: "rw" },
  helpers: `${WGSL_MATH}${GRAD_RAW}
fn gradRaw(r: u32, c: u32) -> f32 {
  let i = r * p.cols + c;
  let v = softplusGrad(raw[i] + bias[c], g[i]);
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
