/*
 * One-token recurrent step of the Mamba-2 mixer (decode; docs/model.md §3), the part between
 * in_proj and the gated norm, on the device state. Per batch row b, from zx = u·in_projᵀ
 * [B, E] = [z (Di) | xBC (C) | dt (H)]:
 *   conv:  out[c] = bias[c] + Σ_{k<K−1} w[c,k]·conv[c,k] + w[c,K−1]·xBC[c]; the conv state
 *          shifts left and takes xBC (oldest first); xbc = silu(out); z is copied out
 *   ssm:   dt = clamp(softplus(dt + dt_bias), dtLo, dtHi) (the time_step_limit),
 *          decay = exp(−dt·exp(A_log));
 *          S_h ← decay·S_h + dt·(x_h ⊗ B_g);  y_h = S_h·C_g + D_h·x_h
 * Shapes: conv state [B,C,K−1], ssm state [B,H,P,N] (updated in place) → y, z [B, Di].
 * With `rows` (hasRows = 1) input row b updates state row rows[b] (early-exit decoding: tokens
 * that skip a step still take it into their state), else state row b.
 * The conv pass is one thread per (b, channel); the ssm pass one workgroup per (b, h), one
 * thread per row p of S_h (each walks its N contiguous state values).
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { WGSL_MATH } from "./wgsl-math.js";

export const STEP_CONV_GROUP = 256;
export const STEP_SSM_GROUP = 64;

const stateRow = `
fn stateRow(b: u32) -> u32 {
  if (p.hasRows == 0u) { return b; }
  return u32(rows[b]);
}`;

export const mamba2StepConvKernel = defineKernel({
  name: "mamba2StepConv",
  params: { B: "u32", Di: "u32", C: "u32", E: "u32", K: "u32", hasRows: "u32" },
  buffers: {
    rows: "read:i32",
    zx: "read",
    weight: "read",
    bias: "read",
    conv: "rw",
    xbc: "rw",
    z: "rw",
  },
  body: `${WGSL_MATH}${stateRow}
${flatEntry(STEP_CONV_GROUP, "p.B * (p.Di + p.C)")}
  let W = p.Di + p.C;
  let b = i / W;
  let j = i % W;
  if (j < p.Di) {
    z[b * p.Di + j] = zx[b * p.E + j];
    return;
  }
  let c = j - p.Di;
  let inp = zx[b * p.E + p.Di + c];
  let km = p.K - 1u;
  let so = (stateRow(b) * p.C + c) * km;
  var v = bias[c] + weight[c * p.K + km] * inp;
  for (var k = 0u; k < km; k++) { v += weight[c * p.K + k] * conv[so + k]; }
  for (var k = 0u; k + 1u < km; k++) { conv[so + k] = conv[so + k + 1u]; }
  if (km > 0u) { conv[so + km - 1u] = inp; }
  xbc[b * p.C + c] = silu(v);
}`,
});

export const mamba2StepSsmKernel = defineKernel({
  name: "mamba2StepSsm",
  params: {
    B: "u32",
    H: "u32",
    P: "u32",
    N: "u32",
    G: "u32",
    Di: "u32",
    C: "u32",
    E: "u32",
    hasRows: "u32",
    dtLo: "f32",
    dtHi: "f32",
  },
  buffers: {
    rows: "read:i32",
    zx: "read",
    xbc: "read",
    dtBias: "read",
    aLog: "read",
    d: "read",
    ssm: "rw",
    y: "rw",
  },
  body: `${WGSL_MATH}${stateRow}
@compute @workgroup_size(${STEP_SSM_GROUP})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_id) li: vec3u) {
  let bh = wg.x + wg.y * ng.x;
  if (bh >= p.B * p.H) { return; }
  let b = bh / p.H;
  let h = bh % p.H;
  let g = h / (p.H / p.G);
  let dt = clamp(softplus(zx[b * p.E + p.Di + p.C + h] + dtBias[h]), p.dtLo, p.dtHi);
  let decay = exp(-dt * exp(aLog[h]));
  let bo = b * p.C + p.Di + g * p.N;
  let co = b * p.C + p.Di + p.G * p.N + g * p.N;
  let so = (stateRow(b) * p.H + h) * p.P * p.N;
  for (var pp = li.x; pp < p.P; pp += ${STEP_SSM_GROUP}u) {
    let xv = xbc[b * p.C + h * p.P + pp];
    let xp = dt * xv;
    var acc = 0.0;
    for (var n = 0u; n < p.N; n++) {
      let o = so + pp * p.N + n;
      let s = decay * ssm[o] + xp * xbc[bo + n];
      ssm[o] = s;
      acc += s * xbc[co + n];
    }
    y[b * p.Di + h * p.P + pp] = acc + d[h] * xv;
  }
}`,
});
