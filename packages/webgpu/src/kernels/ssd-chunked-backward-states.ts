/*
 * Chunked SSD scan, backward: the passes that carry the state gradient across chunks (the
 * forward and its notation: kernels/ssd-chunked.ts; the whole backward's order:
 * ssd-chunked-backward.ts). With gY the output gradient and R_c = ∂L/∂S_end of chunk c:
 *   chunkOuter (mode 1)  Q_c = Σ_i E_i·gY_iᵀ ⊗ C_i: the state gradient the chunk's outputs send back
 *   reversePass  one workgroup per (b, h), chunks last to first: R_{c−1} = Ec·R_c + Q_c; the
 *                initial-state gradient is Ec_0·R_0 + Q_0; ∂Λ_{L−1} gets Ec·Σ R_c ⊙ S_prev
 *   rowsByState  vB = X·R_c, uC = gY·S_prev  (per head, [B,T,H,N]; scaled by w, E in the finish)
 * chunkOuter and the uC product share one dispatch (ssdOuterRows).
 * Shapes: gY, X [B,T,H,P]; C [B,T,G,N]; Q, R, S per (b, h, chunk) [P, N]; vB, uC [B,T,H,N].
 */
import { defineKernel } from "../kernel-def.js";
import {
  chunkHelpers,
  chunkOuterCoef,
  chunkOuterMain,
  ssdDims,
  TILE,
  tileDecl,
  tileEntry,
} from "./ssd-chunked.js";
import { groupSumWgsl } from "./wgsl-group-sum.js";

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
