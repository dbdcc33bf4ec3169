/**
 * Chunked SSD scan, backward (the forward and its notation: kernels/ssd-chunked.ts). With gY the
 * output gradient and R_c = ∂L/∂S_end of chunk c (the final-state gradient for the last chunk):
 *   chunkOuter (mode 1)  Q_c = Σ_i E_i·gY_iᵀ ⊗ C_i: the state gradient the chunk's outputs send back
 *   reversePass  one workgroup per (b, h), chunks last to first: R_{c−1} = Ec·R_c + Q_c; the
 *                initial-state gradient is Ec_0·R_0 + Q_0; ∂Λ_{L−1} gets Ec·Σ R_c ⊙ S_prev
 *   intraGrad    per (b, c, h): dM = gY·Xᵀ (lower triangle), d(CBᵀ)_ij = dM_ij·exp(Λ_i−Λ_j)·dt_j
 *                per head; the Λ and dt sums of the intra block (every term f·exp(Λ_i − Λ_j)
 *                sends ∂f to Λ_i and −∂f to Λ_j)
 *   gradX        ∂X = Mᵀ·gY + diag(w)·B·R_cᵀ (+ D_h·gY)
 *   rowsByState  vB = X·R_c, uC = gY·S_prev  (per head, [B,T,H,N]; scaled by w, E next)
 *   finish       per (b, c, h) a thread per position: ∂B_h = w ⊙ vB, ∂C_h = E ⊙ uC, their Λ and
 *                dt terms, then the reverse cumulative sum da_k = Σ_{i ≥ k} ∂Λ_i (a parallel
 *                suffix sum in workgroup memory)
 *   groupGrad    per (b, c, g): ∂B = Σ_h ∂B_h + d(CBᵀ)ᵀ·C,  ∂C = Σ_h ∂C_h + d(CBᵀ)·B (summed heads)
 *   dtGrad       ∂dt = ddt + A_h·da;  ∂A_h = Σ dt·da and ∂D_h = Σ gY ⊙ X are column sums.
 * Independent passes share a dispatch, their workgroups told apart by index: chunkOuter (mode 1)
 * with rowsByState's uC (ssdOuterRows), dtGrad with the first stages of the ∂A and ∂D sums.
 * Reductions run in a fixed order in workgroup memory (no atomics): deterministic.
 */
import { defineKernel, flatIndex } from "../kernel-def.js";
import { columnRoleDecl, columnRoleWgsl } from "./column-sum.js";
import {
  cbHelpers,
  chunkHelpers,
  chunkOuterCoef,
  chunkOuterMain,
  MAX_CHUNK,
  SSD_LINEAR_GROUP,
  ssdDims,
  TILE,
  tileDecl,
  tileEntry,
} from "./ssd-chunked.js";
import { groupSumWgsl } from "./wgsl-group-sum.js";
import { segScanWgsl } from "./wgsl-seg-scan.js";

const WG = 256;

/** One workgroup per (b, h) = wg.x: the reverse inter-chunk recurrence. */
export const ssdReversePassKernel = defineKernel({
  name: "ssdReversePass",
  params: { nc: "u32", PN: "u32", hasGs: "u32" },
  buffers: {
    gs: "read",
    q: "read",
    cdecay: "read",
    states: "read",
    rstore: "rw",
    dotRS: "rw",
    gs0: "rw",
  },
  body: `${groupSumWgsl(WG)}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) li: vec3u) {
  let bh = wg.x;
  let lid = li.x;
  for (var cc = 0u; cc < p.nc; cc++) {
    let c = p.nc - 1u - cc;
    var dot = 0.0;
    for (var e = lid; e < p.PN; e += ${WG}u) {
      var r = 0.0;
      if (cc == 0u) {
        if (p.hasGs != 0u) { r = gs[bh * p.PN + e]; }
      } else {
        let o1 = (bh * p.nc + c + 1u) * p.PN + e;
        r = cdecay[bh * p.nc + c + 1u] * rstore[o1] + q[o1];
      }
      let o = (bh * p.nc + c) * p.PN + e;
      rstore[o] = r;
      dot += r * states[o];
    }
    let total = groupSum(lid, dot);
    if (lid == 0u) { dotRS[bh * p.nc + c] = cdecay[bh * p.nc + c] * total; }
  }
  for (var e = lid; e < p.PN; e += ${WG}u) {
    let o = bh * p.nc * p.PN + e;
    gs0[bh * p.PN + e] = cdecay[bh * p.nc] * rstore[o] + q[o];
  }
}`,
});

/** Intra-chunk block gradients, one workgroup per (b, c, h) = (wg.y, wg.z). */
export const ssdIntraGradKernel = defineKernel({
  name: "ssdIntraGrad",
  params: ssdDims,
  buffers: {
    gy: "read",
    x: "read",
    dl: "read",
    cb: "read",
    seq: "read:i32",
    dotRS: "read",
    dcbh: "rw",
    sums: "rw",
  },
  body: `${chunkHelpers}${cbHelpers}${tileDecl}
var<workgroup> s1: array<f32, ${TILE * TILE}>;
var<workgroup> s2: array<f32, ${TILE * TILE}>;
var<workgroup> rowT1: array<f32, ${MAX_CHUNK}>;
var<workgroup> colT1: array<f32, ${MAX_CHUNK}>;
var<workgroup> colT2: array<f32, ${MAX_CHUNK}>;
${tileEntry}
  let k = chunkOf(wg.y, wg.z);
  let lid = ly * ${TILE}u + lx;
  for (var l = lid; l < ${MAX_CHUNK}u; l += ${TILE * TILE}u) {
    rowT1[l] = 0.0;
    colT1[l] = 0.0;
    colT2[l] = 0.0;
  }
  workgroupBarrier();
  let nT = (k.L + ${TILE - 1}u) / ${TILE}u;
  for (var ti = 0u; ti < nT; ti++) {
    for (var tj = 0u; tj <= ti; tj++) {
      let i = ti * ${TILE}u + ly;
      let j = tj * ${TILE}u + lx;
      let jr = tj * ${TILE}u + ly;
      var dm = 0.0;
      for (var p0 = 0u; p0 < p.P; p0 += ${TILE}u) {
        let pc = min(p0 + lx, p.P - 1u);
        ta[ly * ${TILE}u + lx] = select(0.0, gy[xRow(k, min(i, k.L - 1u)) + pc], i < k.L && p0 + lx < p.P);
        // X tile transposed (tb[p][j]) so that tileDot sums over p
        tb[lx * ${TILE}u + ly] = select(0.0, x[xRow(k, min(jr, k.L - 1u)) + pc], jr < k.L && p0 + lx < p.P);
        workgroupBarrier();
        dm += tileDot(ly, lx);
        workgroupBarrier();
      }
      var t1 = 0.0;
      var t2 = 0.0;
      if (i < k.L && j <= i) {
        let dec = segDecay(k, i, j);
        let dtj = dtAt(k, j);
        dcbh[((k.b * p.nc + k.c) * p.H + k.h) * p.Lc * p.Lc + i * p.Lc + j] = dm * dec * dtj;
        t2 = dm * cbAt(k, i, j) * dec;
        t1 = t2 * dtj;
      }
      s1[ly * ${TILE}u + lx] = t1;
      s2[ly * ${TILE}u + lx] = t2;
      workgroupBarrier();
      if (ly == 0u) {
        var a1 = 0.0;
        var a2 = 0.0;
        for (var r = 0u; r < ${TILE}u; r++) {
          a1 += s1[r * ${TILE}u + lx];
          a2 += s2[r * ${TILE}u + lx];
        }
        colT1[tj * ${TILE}u + lx] += a1;
        colT2[tj * ${TILE}u + lx] += a2;
      } else if (ly == 1u) {
        var a = 0.0;
        for (var q = 0u; q < ${TILE}u; q++) { a += s1[lx * ${TILE}u + q]; }
        rowT1[ti * ${TILE}u + lx] += a;
      }
      workgroupBarrier();
    }
  }
  for (var l = lid; l < k.L; l += ${TILE * TILE}u) {
    var d = rowT1[l] - colT1[l];
    if (l == k.L - 1u) { d += dotRS[k.bh * p.nc + k.c]; }
    sums[(k.bh * p.T + k.t0 + l) * 2u] = d;
    sums[(k.bh * p.T + k.t0 + l) * 2u + 1u] = colT2[l];
  }
}`,
});

/** ∂X = Mᵀ·gY + diag(w)·B·R_cᵀ (+ D_h·gY); grid (L/16·P/16 tiles, nc, B·H). */
export const ssdGradXKernel = defineKernel({
  name: "ssdGradX",
  params: { ...ssdDims, hasD: "u32" },
  buffers: {
    gy: "read",
    dl: "read",
    cb: "read",
    Bm: "read",
    rstore: "read",
    seq: "read:i32",
    D: "read",
    gx: "rw",
  },
  body: `${chunkHelpers}${cbHelpers}${tileDecl}
${tileEntry}
  let k = chunkOf(wg.y, wg.z);
  let nP = (p.P + ${TILE - 1}u) / ${TILE}u;
  let tj = wg.x / nP;
  let p0 = (wg.x % nP) * ${TILE}u;
  if (tj * ${TILE}u >= k.L) { return; }
  let nT = (k.L + ${TILE - 1}u) / ${TILE}u;
  let j = tj * ${TILE}u + ly;
  let pp = p0 + lx;
  let jc = min(j, k.L - 1u);
  var acc = 0.0;
  for (var ti = tj; ti < nT; ti++) {
    let il = ti * ${TILE}u + lx;
    ta[ly * ${TILE}u + lx] = select(0.0, mval(k, min(il, k.L - 1u), min(jc, il)), il < k.L && j <= il);
    let ir = ti * ${TILE}u + ly;
    tb[ly * ${TILE}u + lx] = select(0.0, gy[xRow(k, min(ir, k.L - 1u)) + min(pp, p.P - 1u)], ir < k.L && pp < p.P);
    workgroupBarrier();
    acc += tileDot(ly, lx);
    workgroupBarrier();
  }
  var acc2 = 0.0;
  for (var n0 = 0u; n0 < p.N; n0 += ${TILE}u) {
    let n = n0 + lx;
    let nc = min(n, p.N - 1u);
    ta[ly * ${TILE}u + lx] = select(0.0, Bm[bcRow(k, jc) + nc], j < k.L && n < p.N);
    let pr = p0 + ly;
    tb[lx * ${TILE}u + ly] = select(0.0, rstore[stateAt(k) + min(pr, p.P - 1u) * p.N + nc], pr < p.P && n < p.N);
    workgroupBarrier();
    acc2 += tileDot(ly, lx);
    workgroupBarrier();
  }
  if (j < k.L && pp < p.P) {
    var v = acc + toEnd(k, j) * dtAt(k, j) * acc2;
    if (p.hasD != 0u) { v += D[k.h] * gy[xRow(k, j) + pp]; }
    gx[xRow(k, j) + pp] = v;
  }
}`,
});

/**
 * WGSL after a tile entry (`wg`, `ly`, `lx` bound): out[b,t,h,n] = Σ_p U[b,t,h,p]·S_c[p,n] (S per
 * (b,h,chunk)) for the tile of grid (L/16·N/16, nc, B·H) at `wg`, with the buffers named `u`,
 * `s` and `out`; closes the function.
 */
function rowsByStateMain(u: string, s: string, out: string): string {
  return `
  let t0 = wg.y * p.Lc;
  let kb = wg.z / p.H;
  let kh = wg.z % p.H;
  let kL = min(p.Lc, p.T - t0);
  let nN = (p.N + ${TILE - 1}u) / ${TILE}u;
  let tl = wg.x / nN;
  let n = (wg.x % nN) * ${TILE}u + lx;
  if (tl * ${TILE}u >= kL) { return; }
  let l = tl * ${TILE}u + ly;
  let lc = min(l, kL - 1u);
  let so = (wg.z * p.nc + wg.y) * p.P * p.N;
  var acc = 0.0;
  for (var p0 = 0u; p0 < p.P; p0 += ${TILE}u) {
    ta[ly * ${TILE}u + lx] = select(0.0, ${u}[((kb * p.T + t0 + lc) * p.H + kh) * p.P + min(p0 + lx, p.P - 1u)], l < kL && p0 + lx < p.P);
    tb[ly * ${TILE}u + lx] = select(0.0, ${s}[so + min(p0 + ly, p.P - 1u) * p.N + min(n, p.N - 1u)], p0 + ly < p.P && n < p.N);
    workgroupBarrier();
    acc += tileDot(ly, lx);
    workgroupBarrier();
  }
  if (l < kL && n < p.N) { ${out}[((kb * p.T + t0 + l) * p.H + kh) * p.N + n] = acc; }
}`;
}

/** out[b,t,h,n] = Σ_p U[b,t,h,p]·S_c[p,n] (S per (b,h,chunk)); grid (L/16·N/16, nc, B·H). */
export const ssdRowsByStateKernel = defineKernel({
  name: "ssdRowsByState",
  params: ssdDims,
  buffers: { u: "read", s: "read", out: "rw" },
  body: `${tileDecl}
${tileEntry}${rowsByStateMain("u", "s", "out")}`,
});

/**
 * The backward's two independent first passes in one dispatch of 16×16-thread tiles: the state
 * gradient from the outputs q (ssdChunkOuter's mode 1: U = gy, V = C, coef = E_j; grid
 * (P/16·N/16 = p.t1, nc, B·H), the first workgroups) and ∂C's state term dCh = gy·S_c
 * (`rowsByStateMain` over the forward's chunk states; grid (L/16·N/16 = p.t2, nc, B·H) after
 * them), each tile read from the flat workgroup index in x, y, z order.
 */
export const ssdOuterRowsKernel = defineKernel({
  name: "ssdOuterRows",
  params: { ...ssdDims, mode: "u32", t1: "u32", t2: "u32" },
  buffers: {
    u: "read",
    dl: "read",
    v: "read",
    seq: "read:i32",
    out: "rw",
    cdecay: "rw",
    states: "read",
    dCh: "rw",
  },
  body: `${chunkHelpers}${tileDecl}${chunkOuterCoef}
fn outerTile(wg: vec3u, ly: u32, lx: u32) {${chunkOuterMain}
fn rowsTile(wg: vec3u, ly: u32, lx: u32) {${rowsByStateMain("u", "states", "dCh")}
@compute @workgroup_size(${TILE}, ${TILE})
fn main(@builtin(workgroup_id) wgid: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_id) li: vec3u) {
  let w = wgid.x + wgid.y * ng.x;
  let BH = p.B * p.H;
  let n1 = p.t1 * p.nc * BH;
  if (w < n1) {
    outerTile(vec3u(w % p.t1, (w / p.t1) % p.nc, w / (p.t1 * p.nc)), li.y, li.x);
    return;
  }
  let j = w - n1;
  if (j >= p.t2 * p.nc * BH) { return; }
  rowsTile(vec3u(j % p.t2, (j / p.t2) % p.nc, j / (p.t2 * p.nc)), li.y, li.x);
}`,
});

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
