/*
 * Chunked SSD scan, backward: the gradients inside a chunk (notation: kernels/ssd-chunked.ts;
 * the whole backward's order: ssd-chunked-backward.ts). With gY the output gradient, M the
 * chunk's masked decay-weighted C·Bᵀ, w = dt·exp(Λ_end − Λ) and R_c from the reverse pass:
 *   intraGrad    per (b, c, h): dM = gY·Xᵀ (lower triangle), d(CBᵀ)_ij = dM_ij·exp(Λ_i−Λ_j)·dt_j
 *                per head; the Λ and dt sums of the intra block (every term f·exp(Λ_i − Λ_j)
 *                sends ∂f to Λ_i and −∂f to Λ_j)
 *   gradX        ∂X = Mᵀ·gY + diag(w)·B·R_cᵀ (+ D_h·gY)
 * Shapes: gY, X, ∂X [B,T,H,P]; d(CBᵀ) per (b, c, h) [Lc, Lc]; sums [B,H,T,2] = (∂Λ, ∂dt) terms.
 */
import { defineKernel } from "../kernel-def.js";
import {
  cbHelpers,
  chunkHelpers,
  MAX_CHUNK,
  ssdDims,
  TILE,
  tileDecl,
  tileEntry,
} from "./ssd-chunked.js";

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
