/*
 * Causal depthwise conv1d + silu + split of the channel axis (docs/model.md §3.2–3.3):
 *   pre[b,t,c] = bias[c] + Σ_{k<K} w[c,k]·in[b, t−K+1+k, c],   y_p[b,t,j] = silu(pre[b,t,o_p+j])
 * in[b,τ,c] = x[b,τ,c] for τ ≥ 0, the initial conv state init[b,c,K−1+τ] for τ < 0 (else 0).
 * Packed documents (seqIdx [B·T], non-decreasing along a row): tap τ of row t is read only when
 * it lies in t's document, i.e. seq[b, max(τ,0)] = seq[b,t] (the initial state belongs to the
 * document at t = 0) — the same terms as @loop/ssm-kernels' firstTap.
 * Shapes: x [B,T,C], weight [C,K] (or [C,1,K]), bias [C], init [B,C,K−1] → y_p [B,T,w_p].
 * Backward: ∂pre = g_p·silu'(pre) (pre recomputed; 0 for a piece without gradient), then
 *   ∂x[τ] = Σ_k w[c,k]·∂pre[τ+K−1−k],  ∂init likewise for τ < 0,
 *   ∂w[c,k] = Σ_{b,t} ∂pre[t]·in[t−K+1+k],  ∂bias = Σ ∂pre   (column sums, ops/column-sum.ts).
 * One thread per output element, channels innermost (coalesced). Absent bias, init and seqIdx
 * are bound to a 1-element placeholder and switched off by the has* flags.
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { columnRoleDecl, columnRoleWgsl, columnSumKernel } from "./column-sum.js";
import { WGSL_MATH } from "./wgsl-math.js";

export const CONV_GROUP = 256;

const dims = {
  B: "u32",
  T: "u32",
  C: "u32",
  K: "u32",
  hasBias: "u32",
  hasInit: "u32",
  hasSeq: "u32",
} as const;

/** WGSL: whether row t of batch b reads tap τ (= t − K + 1 + k, as i32). */
const tapRule = `
fn reads(b: u32, t: u32, tau: i32) -> bool {
  if (p.hasSeq == 0u) { return true; }
  return seq[b * p.T + u32(max(tau, 0))] == seq[b * p.T + t];
}
fn tapValue(b: u32, t: u32, tau: i32, c: u32) -> f32 {
  if (!reads(b, t, tau)) { return 0.0; }
  if (tau >= 0) { return x[(b * p.T + u32(tau)) * p.C + c]; }
  if (p.hasInit == 0u) { return 0.0; }
  return init[(b * p.C + c) * (p.K - 1u) + u32(i32(p.K) - 1 + tau)];
}`;

const preActivation = `${tapRule}
fn preAct(r: u32, c: u32) -> f32 {
  let b = r / p.T;
  let t = r % p.T;
  var s = 0.0;
  if (p.hasBias != 0u) { s = bias[c]; }
  for (var k = 0u; k < p.K; k++) {
    s += weight[c * p.K + k] * tapValue(b, t, i32(t) + i32(k) - i32(p.K) + 1, c);
  }
  return s;
}`;

const entry = flatEntry(CONV_GROUP);

/** The forward's inputs, bound first (in this order) by every kernel that recomputes pre. */
const convInputs = {
  x: "read",
  weight: "read",
  bias: "read",
  init: "read",
  seq: "read:i32",
} as const;

/** Piece [off, off + w) of the channels: y[r, j] = silu(pre[r, off + j]) for n = B·T·w items. */
export const convSiluPieceKernel = defineKernel({
  name: "causalConv1dSiluSplit",
  params: { ...dims, off: "u32", w: "u32", n: "u32" },
  buffers: { ...convInputs, y: "rw" },
  body: `${WGSL_MATH}${preActivation}
${entry}
  y[i] = silu(preAct(i / p.w, p.off + i % p.w));
}`,
});

/**
 * All three pieces in one dispatch (the Mamba-2 x | B | C split): thread i of n = B·T·C writes
 * channel c of row r into the piece holding c (pieces [0, o1), [o1, o2), [o2, C)).
 */
export const convSilu3Kernel = defineKernel({
  name: "causalConv1dSilu3",
  params: { ...dims, o1: "u32", o2: "u32", n: "u32" },
  buffers: { ...convInputs, y0: "rw", y1: "rw", y2: "rw" },
  body: `${WGSL_MATH}${preActivation}
${entry}
  let r = i / p.C;
  let c = i % p.C;
  let v = silu(preAct(r, c));
  if (c < p.o1) { y0[r * p.o1 + c] = v; }
  else if (c < p.o2) { y1[r * (p.o2 - p.o1) + c - p.o1] = v; }
  else { y2[r * (p.C - p.o2) + c - p.o2] = v; }
}`,
});

/**
 * ∂pre of all three pieces in one dispatch: gpre[r, c] = g_p[r, c − o_p]·silu'(pre) for the
 * piece p holding c (zeros where that piece has no gradient: hasG bit p clear).
 */
const threeBuffers = { ...convInputs, g0: "read", g1: "read", g2: "read", gpre: "rw" } as const;

/** WGSL: ∂pre[r, c] of the three pieces (0 where c's piece has no gradient: hasG bit clear). */
const gradPre3 = `
fn gradPre3(r: u32, c: u32) -> f32 {
  var g = 0.0;
  var has = false;
  if (c < p.o1) { has = (p.hasG & 1u) != 0u; if (has) { g = g0[r * p.o1 + c]; } }
  else if (c < p.o2) {
    has = (p.hasG & 2u) != 0u;
    if (has) { g = g1[r * (p.o2 - p.o1) + c - p.o1]; }
  } else { has = (p.hasG & 4u) != 0u; if (has) { g = g2[r * (p.C - p.o2) + c - p.o2]; } }
  if (!has) { return 0.0; }
  return g * siluGrad(preAct(r, c));
}`;

/** ∂pre of all three pieces in one dispatch: gpre[r, c] = g_p[r, c − o_p]·silu'(pre). */
export const convSilu3GradPreKernel = defineKernel({
  name: "causalConv1dSilu3GradPre",
  params: { ...dims, o1: "u32", o2: "u32", n: "u32", hasG: "u32" },
  buffers: threeBuffers,
  body: `${WGSL_MATH}${preActivation}${gradPre3}
${entry}
  gpre[i] = gradPre3(i / p.C, i % p.C);
}`,
});

/**
 * ∂pre of the three pieces and ∂bias = Σ_r ∂pre by one dispatch: the column sum's stage 1
 * evaluates each (r, c) once and writes gpre[r, c] as it returns it.
 */
export const convSilu3GradPreBias = columnSumKernel({
  name: "causalConv1dSilu3GradPreBias",
  params: { ...dims, o1: "u32", o2: "u32", hasG: "u32" },
  buffers: threeBuffers,
  helpers: `${WGSL_MATH}${preActivation}${gradPre3}
fn gradPreStored(r: u32, c: u32) -> f32 {
  let v = gradPre3(r, c);
  gpre[r * p.C + c] = v;
  return v;
}`,
  term: "gradPreStored(r, c)",
});

/** ∂pre of one piece (zeros where hasG = 0): gpre[r, off + j] = g[r, j]·silu'(pre). */
export const convSiluGradPreKernel = defineKernel({
  name: "causalConv1dSiluSplitGradPre",
  params: { ...dims, off: "u32", w: "u32", n: "u32", hasG: "u32" },
  buffers: { ...convInputs, g: "read", gpre: "rw" },
  body: `${WGSL_MATH}${preActivation}
${entry}
  let r = i / p.w;
  let c = p.off + i % p.w;
  var v = 0.0;
  if (p.hasG != 0u) { v = g[i] * siluGrad(preAct(r, c)); }
  gpre[r * p.C + c] = v;
}`,
});

const gradTaps = `
fn seqAt(b: u32, t: u32) -> i32 { return seq[b * p.T + t]; }
/** Σ_k w[c,k]·∂pre[b, τ+K−1−k, c] over the rows t < T that read tap τ. */
fn tapGrad(b: u32, tau: i32, c: u32) -> f32 {
  var s = 0.0;
  for (var k = 0u; k < p.K; k++) {
    let t = tau + i32(p.K) - 1 - i32(k);
    if (t < 0 || t >= i32(p.T)) { continue; }
    if (p.hasSeq != 0u && seqAt(b, u32(max(tau, 0))) != seqAt(b, u32(t))) { continue; }
    s += weight[c * p.K + k] * gpre[(b * p.T + u32(t)) * p.C + c];
  }
  return s;
}`;

/**
 * ∂x (n = B·T·C items, the first p.xGroups workgroups; none when x needs no gradient) and the
 * first stage of ∂w's column sum (`columnRoleWgsl`, prefix "w": rows B·T, columns C·K, the
 * p.wJobs workgroups after them) in one dispatch: both read only ∂pre and the forward's inputs.
 */
export const convGradXWeightKernel = defineKernel({
  name: "causalConv1dGradXWeight",
  params: {
    ...dims,
    n: "u32",
    xGroups: "u32",
    wJobs: "u32",
    ...columnRoleDecl("w").params,
  },
  buffers: {
    weight: "read",
    gpre: "read",
    seq: "read:i32",
    x: "read",
    init: "read",
    gx: "rw",
    ...columnRoleDecl("w").buffers,
  },
  body: `${gradTaps}${tapRule}
fn wTerm(r: u32, col: u32) -> f32 {
  let c = col / p.K;
  let k = col % p.K;
  let t = r % p.T;
  return gpre[r * p.C + c] * tapValue(r / p.T, t, i32(t) + i32(k) - i32(p.K) + 1, c);
}
${columnRoleWgsl(CONV_GROUP, "wTerm(r, c)", "w")}
@compute @workgroup_size(${CONV_GROUP})
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3u,
        @builtin(num_workgroups) ng: vec3u) {
  let g = wg.x + wg.y * ng.x;
  if (g >= p.xGroups) {
    if (g - p.xGroups < p.wJobs) { wcolumnRole(g - p.xGroups, li); }
    return;
  }
  let i = g * ${CONV_GROUP}u + li;
  if (i >= p.n) { return; }
  let c = i % p.C;
  let r = i / p.C;
  gx[i] = tapGrad(r / p.T, i32(r % p.T), c);
}`,
});

/** ∂init[b, c, j] (tap τ = j − (K−1) < 0) for n = B·C·(K−1) items. */
export const convGradInitKernel = defineKernel({
  name: "causalConv1dGradInit",
  params: { B: "u32", T: "u32", C: "u32", K: "u32", hasSeq: "u32", n: "u32" },
  buffers: { weight: "read", gpre: "read", seq: "read:i32", ginit: "rw" },
  body: `${gradTaps}
${entry}
  let j = i % (p.K - 1u);
  let bc = i / (p.K - 1u);
  ginit[i] = tapGrad(bc / p.C, i32(j) - i32(p.K) + 1, bc % p.C);
}`,
});

/** ∂bias[c] = Σ_r ∂pre[r, c]. */
export const convGradBias = columnSumKernel({
  name: "causalConv1dGradBias",
  buffers: { gpre: "read" },
  term: "gpre[r * p.cols + c]",
});
