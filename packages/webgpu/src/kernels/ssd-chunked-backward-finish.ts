/*
 * Chunked SSD scan, backward: the last passes, from the per-head partials to the inputs'
 * gradients (notation: kernels/ssd-chunked.ts; the whole backward's order:
 * ssd-chunked-backward.ts):
 *   finish       per (b, c, h) a thread per position: ∂B_h = w ⊙ vB, ∂C_h = E ⊙ uC, their Λ and
 *                dt terms, then the reverse cumulative sum da_k = Σ_{i ≥ k} ∂Λ_i (a parallel
 *                suffix sum in workgroup memory)
 *   groupGrad    per (b, c, g): ∂B = Σ_h ∂B_h + d(CBᵀ)ᵀ·C,  ∂C = Σ_h ∂C_h + d(CBᵀ)·B (summed heads)
 *   dtGrad       ∂dt = ddt + A_h·da;  ∂A_h = Σ dt·da and ∂D_h = Σ gY ⊙ X are column sums (their
 *                first stages in the same dispatch)
 * Shapes: ∂B_h, ∂C_h [B,T,H,N]; ∂B, ∂C [B,T,G,N]; sums [B,H,T,2] = (da, ddt); ∂dt [B,T,H].
 */
import { defineKernel, flatIndex } from "../kernel-def.js";
import { columnRoleDecl, columnRoleWgsl } from "./column-sum.js";
import {
  chunkHelpers,
  SSD_LINEAR_GROUP,
  ssdDims,
  TILE,
  tileDecl,
  tileEntry,
} from "./ssd-chunked.js";
import { segScanWgsl } from "./wgsl-seg-scan.js";

/**
 * Per chunk (b, c, h), one thread per chunk position in a segment of `seg` = the chunk length
 * rounded up to a power of two consecutive threads (256/seg chunks per workgroup; grid
 * grid(B·H·nc·seg, 256), chunks in (b, h, c) order): scales vB → ∂B_h and uC → ∂C_h in place, adds
 * their Λ and dt terms to sums, and leaves sums = (da, ddt) per position. The reverse cumulative
 * sum of ∂Λ and the chunk's total of the w·∂w terms (which all reach Λ_{L−1}) are one parallel
 * suffix sum (segScan) of the pairs.
 */
export const ssdFinishKernel = defineKernel({
  name: "ssdFinish",
  params: { ...ssdDims, n: "u32", seg: "u32" },
  buffers: {
    dl: "read",
    Bm: "read",
    Cm: "read",
    seq: "read:i32",
    dBh: "rw",
    dCh: "rw",
    sums: "rw",
  },
  body: `${chunkHelpers}${segScanWgsl(SSD_LINEAR_GROUP, "vec2f", true)}
@compute @workgroup_size(${SSD_LINEAR_GROUP})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let flat = ${flatIndex(SSD_LINEAR_GROUP)};
  let item = min(flat / p.seg, p.n - 1u);
  let k = chunkOf(item % p.nc, item / p.nc);
  let l = flat % p.seg;
  // Threads past the last chunk or the chunk's end add 0; none returns before the barriers.
  let valid = flat / p.seg < p.n && l < k.L;
  var dL = 0.0;
  var qw = 0.0;
  if (valid) {
    let row = ((k.b * p.T + k.t0 + l) * p.H + k.h) * p.N;
    let brow = bcRow(k, l);
    let ef = toEnd(k, l);
    let w = ef * dtAt(k, l);
    let E = fromStart(k, l);
    var qB = 0.0;
    var qC = 0.0;
    for (var n = 0u; n < p.N; n++) {
      let vb = dBh[row + n];
      qB += Bm[brow + n] * vb;
      dBh[row + n] = w * vb;
      let uc = dCh[row + n];
      qC += Cm[brow + n] * uc;
      dCh[row + n] = E * uc;
    }
    let so = (k.bh * p.T + k.t0 + l) * 2u;
    qw = qB * w;
    dL = sums[so] + E * qC - qw;
    sums[so + 1u] = sums[so + 1u] + qB * ef;
  }
  let suffix = segScan(lid, p.seg, vec2f(dL, qw));
  // scanBuf at the segment's first thread: the chunk's total of qw
  let total = scanBuf[lid - l].y;
  if (valid) { sums[(k.bh * p.T + k.t0 + l) * 2u] = suffix.x + total; }
}`,
});

/** ∂B, ∂C per group: head partials plus the d(CBᵀ) products; grid (L/16·N/16, nc, B·G). */
export const ssdGroupGradKernel = defineKernel({
  name: "ssdGroupGrad",
  params: ssdDims,
  buffers: {
    Bm: "read",
    Cm: "read",
    dcbh: "read",
    dBh: "read",
    dCh: "read",
    gB: "rw",
    gC: "rw",
  },
  body: `${tileDecl}
var<workgroup> ta2: array<f32, ${TILE * TILE}>;
var<workgroup> tb2: array<f32, ${TILE * TILE}>;
${tileEntry}
  let b = wg.z / p.G;
  let g = wg.z % p.G;
  let c = wg.y;
  let t0 = c * p.Lc;
  let L = min(p.Lc, p.T - t0);
  let hpg = p.H / p.G;
  let nN = (p.N + ${TILE - 1}u) / ${TILE}u;
  let tl = wg.x / nN;
  if (tl * ${TILE}u >= L) { return; }
  let l = tl * ${TILE}u + ly;
  let n = (wg.x % nN) * ${TILE}u + lx;
  let lc = min(l, L - 1u);
  let nc = min(n, p.N - 1u);
  let dcb0 = (b * p.nc + c) * p.H + g * hpg;
  var accB = 0.0;
  var accC = 0.0;
  if (l < L && n < p.N) {
    for (var hh = 0u; hh < hpg; hh++) {
      let o = ((b * p.T + t0 + l) * p.H + g * hpg + hh) * p.N + n;
      accB += dBh[o];
      accC += dCh[o];
    }
  }
  let nT = (L + ${TILE - 1}u) / ${TILE}u;
  for (var tk = 0u; tk < nT; tk++) {
    let kc = tk * ${TILE}u + lx;
    let kr = tk * ${TILE}u + ly;
    let kcc = min(kc, L - 1u);
    var sC = 0.0;
    var sB = 0.0;
    for (var hh = 0u; hh < hpg; hh++) {
      let o = (dcb0 + hh) * p.Lc * p.Lc;
      if (l < L && kc <= l) { sC += dcbh[o + lc * p.Lc + kcc]; }
      if (l < L && kc < L && kc >= l) { sB += dcbh[o + kcc * p.Lc + lc]; }
    }
    ta[ly * ${TILE}u + lx] = sC;  // Σ_h d(CBᵀ)[l, k]
    ta2[ly * ${TILE}u + lx] = sB; // Σ_h d(CBᵀ)[k, l]
    let krc = min(kr, L - 1u);
    tb[ly * ${TILE}u + lx] = select(0.0, Bm[((b * p.T + t0 + krc) * p.G + g) * p.N + nc], kr < L && n < p.N);
    tb2[ly * ${TILE}u + lx] = select(0.0, Cm[((b * p.T + t0 + krc) * p.G + g) * p.N + nc], kr < L && n < p.N);
    workgroupBarrier();
    accC += tileDot(ly, lx);
    var s = 0.0;
    for (var q = 0u; q < ${TILE}u; q++) { s += ta2[ly * ${TILE}u + q] * tb2[q * ${TILE}u + lx]; }
    accB += s;
    workgroupBarrier();
  }
  if (l < L && n < p.N) {
    let o = ((b * p.T + t0 + l) * p.G + g) * p.N + n;
    gB[o] = accB;
    gC[o] = accC;
  }
}`,
});

/**
 * ∂dt[b,t,h] = ddt + A_h·da from sums [B,H,T,2] = (da, ddt); n = B·T·H items, in the first
 * p.dtGroups workgroups. The same dispatch runs the first stage of two column sums in the
 * workgroups after them (`columnRoleWgsl`): ∂A[h] = Σ_{b,t} dt·da (rows B·T, columns H; prefix
 * "a", p.aJobs workgroups) and the D skip's ∂D[h] = Σ gy ⊙ x over (b, t, p) (prefix "d",
 * p.dJobs workgroups; none without D).
 */
export const ssdDtGradKernel = defineKernel({
  name: "ssdDtGrad",
  params: {
    T: "u32",
    H: "u32",
    P: "u32",
    n: "u32",
    dtGroups: "u32",
    aJobs: "u32",
    dJobs: "u32",
    ...columnRoleDecl("a").params,
    ...columnRoleDecl("d").params,
  },
  buffers: {
    sums: "read",
    A: "read",
    dl: "read",
    gy: "read",
    x: "read",
    gdt: "rw",
    ...columnRoleDecl("a").buffers,
    ...columnRoleDecl("d").buffers,
  },
  body: `
fn aTerm(r: u32, h: u32) -> f32 {
  let o = (((r / p.T) * p.acols + h) * p.T + r % p.T) * 2u;
  return dl[o] * sums[o];
}
fn dTerm(r: u32, c: u32) -> f32 {
  let o = (r * p.dcols + c) * p.P;
  var s = 0.0;
  for (var k = 0u; k < p.P; k++) { s += gy[o + k] * x[o + k]; }
  return s;
}
${columnRoleWgsl(SSD_LINEAR_GROUP, "aTerm(r, c)", "a")}
${columnRoleWgsl(SSD_LINEAR_GROUP, "dTerm(r, c)", "d")}
@compute @workgroup_size(${SSD_LINEAR_GROUP})
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3u,
        @builtin(num_workgroups) ng: vec3u) {
  let w = wg.x + wg.y * ng.x;
  if (w >= p.dtGroups) {
    let j = w - p.dtGroups;
    if (j < p.aJobs) { acolumnRole(j, li); } else if (j - p.aJobs < p.dJobs) { dcolumnRole(j - p.aJobs, li); }
    return;
  }
  let i = w * ${SSD_LINEAR_GROUP}u + li;
  if (i >= p.n) { return; }
  let h = i % p.H;
  let bt = i / p.H;
  let o = (((bt / p.T) * p.H + h) * p.T + bt % p.T) * 2u;
  gdt[i] = sums[o + 1u] + A[h] * sums[o];
}`,
});
