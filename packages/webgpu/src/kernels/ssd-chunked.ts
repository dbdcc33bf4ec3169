/*
 * Chunked SSD scan, forward (Mamba-2 "state space duality", docs/model.md §3.5): the recurrence
 *   S_t = exp(dt_t·A_h)·S_{t−1} + dt_t·(x_t ⊗ B_t[g]),   y_t = S_t·C_t[g] + D_h·x_t
 * regrouped into chunks of Lc positions (the last may be shorter). Per (batch b, chunk c, head h),
 * with Λ the in-chunk cumulative sum of dt·A_h:
 *   intra-chunk:    Y  = M·X,   M_ij = (C_i·B_j)·exp(Λ_i − Λ_j)·dt_j  (j ≤ i)
 *   state → output: Y += diag(E)·C·S_prevᵀ,   E_i = exp(Λ_i)
 *   chunk state:    S_end = Ec·S_prev + Xᵀ·diag(w)·B,   w_j = exp(Λ_{L−1} − Λ_j)·dt_j,  Ec = E_{L−1}
 * Packed documents (seqIdx [B·T], non-decreasing along a row): a decay factor that spans a
 * document start is exactly 0 (mamba_ssm's seq_idx); positions u ≤ v are in one document iff
 * seq[u] = seq[v], and the state before chunk c belongs to position max(t0 − 1, 0).
 * Passes (Mamba-2's Triton layout; prep and cb, independent, share one dispatch: ssdPrepCb):
 *   prep        per (b, h, c) a segment of threads, one per position: dl[b,h,t] = (dt, Λ), Λ a
 *               parallel prefix sum                                         [B,H,T,2]
 *   cb          per (b, c, g) 16×16 tiles: cb = C·Bᵀ (lower triangle), shared by the group's heads
 *   chunkOuter  per (b, c, h) tiles of [P,N]: Sloc = Xᵀ·diag(w)·B and Ec       [B,H,nc,P,N]
 *   statePass   one thread per (b, h, state element), sequential over chunks (the only serial
 *               part: nc steps): states[c] = S_prev of chunk c, then the final state
 *   chunkOut    per (b, c, h) tiles of [L,P]: y = M·X + diag(E)·C·S_prevᵀ + D·X
 * Every tile kernel is 16×16 threads staging 16×16 operand tiles in workgroup memory; sums run in
 * a fixed order (deterministic). States are [P,N] row-major, as the final state.
 * Shapes: x [B,T,H,P], dt [B,T,H], A [H], B/C [B,T,G,N], s0 [B,H,P,N], D [H] → y, state.
 */
import { defineKernel, flatEntry, type ParamType } from "../kernel-def.js";
import { segScanWgsl } from "./wgsl-seg-scan.js";

export const TILE = 16;
/** Longest chunk the kernels take (workgroup arrays of the backward are sized by it). */
export const MAX_CHUNK = 256;
export const SSD_LINEAR_GROUP = 256;

export const ssdDims = {
  B: "u32",
  T: "u32",
  H: "u32",
  P: "u32",
  G: "u32",
  N: "u32",
  Lc: "u32",
  nc: "u32",
  hasSeq: "u32",
} satisfies Record<string, ParamType>;

/** WGSL: the (b, c, h) a tile workgroup works on, and the masked decays of its chunk. */
export const chunkHelpers = `
struct Chunk { b: u32, h: u32, g: u32, bh: u32, c: u32, t0: u32, L: u32 }
fn chunkOf(c: u32, bh: u32) -> Chunk {
  let t0 = c * p.Lc;
  let h = bh % p.H;
  return Chunk(bh / p.H, h, h / (p.H / p.G), bh, c, t0, min(p.Lc, p.T - t0));
}
fn dtAt(k: Chunk, i: u32) -> f32 { return dl[(k.bh * p.T + k.t0 + i) * 2u]; }
fn lamAt(k: Chunk, i: u32) -> f32 { return dl[(k.bh * p.T + k.t0 + i) * 2u + 1u]; }
/** Whether absolute positions u ≤ v of row b lie in one document. */
fn sameDoc(b: u32, u: u32, v: u32) -> bool {
  if (p.hasSeq == 0u) { return true; }
  return seq[b * p.T + u] == seq[b * p.T + v];
}
/** exp(Λ_i − Λ_j) for chunk positions j ≤ i; 0 across a document start. */
fn segDecay(k: Chunk, i: u32, j: u32) -> f32 {
  if (!sameDoc(k.b, k.t0 + j, k.t0 + i)) { return 0.0; }
  return exp(lamAt(k, i) - lamAt(k, j));
}
/** E_i = exp(Λ_i): the decay of the state before the chunk up to position i. */
fn fromStart(k: Chunk, i: u32) -> f32 {
  let before = select(k.t0 - 1u, 0u, k.t0 == 0u);
  if (!sameDoc(k.b, before, k.t0 + i)) { return 0.0; }
  return exp(lamAt(k, i));
}
/** exp(Λ_{L−1} − Λ_j): the decay from position j to the end of the chunk. */
fn toEnd(k: Chunk, j: u32) -> f32 { return segDecay(k, k.L - 1u, j); }
fn xRow(k: Chunk, i: u32) -> u32 { return ((k.b * p.T + k.t0 + i) * p.H + k.h) * p.P; }
fn bcRow(k: Chunk, i: u32) -> u32 { return ((k.b * p.T + k.t0 + i) * p.G + k.g) * p.N; }
fn stateAt(k: Chunk) -> u32 { return (k.bh * p.nc + k.c) * p.P * p.N; }
`;

/** WGSL: the intra-chunk matrix from the saved C·Bᵀ (kernels that bind cb). */
export const cbHelpers = `
fn cbAt(k: Chunk, i: u32, j: u32) -> f32 {
  return cb[((k.b * p.nc + k.c) * p.G + k.g) * p.Lc * p.Lc + i * p.Lc + j];
}
/** M_ij = (C_i·B_j)·exp(Λ_i − Λ_j)·dt_j for j ≤ i. */
fn mval(k: Chunk, i: u32, j: u32) -> f32 { return cbAt(k, i, j) * segDecay(k, i, j) * dtAt(k, j); }
`;

export const tileDecl = `
var<workgroup> ta: array<f32, ${TILE * TILE}>;
var<workgroup> tb: array<f32, ${TILE * TILE}>;
fn tileDot(ly: u32, lx: u32) -> f32 {
  var s = 0.0;
  for (var q = 0u; q < ${TILE}u; q++) { s += ta[ly * ${TILE}u + q] * tb[q * ${TILE}u + lx]; }
  return s;
}`;

export const tileEntry = `@compute @workgroup_size(${TILE}, ${TILE})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) li: vec3u) {
  let ly = li.y;
  let lx = li.x;`;

/**
 * The scan's two independent first passes in one dispatch:
 * - prep (the first p.prepGroups workgroups): dl[b,h,t] = (dt[b,t,h], Λ) with Λ the in-chunk
 *   cumulative sum of dt·A_h; n = B·H·nc chunks. A segment of `seg` = the chunk length rounded up
 *   to a power of two consecutive threads per chunk, one thread per position; workgroups of 256
 *   threads hold 256/seg chunks; Λ is a parallel prefix sum (segScan).
 * - C·Bᵀ (the workgroups after them, one per tile of the grid (tiles², nc, B·G) read in x, y, z
 *   order, 16×16 threads): cb[b,c,g,i,j] = C_i·B_j for j ≤ i.
 * Grid: grid((prepGroups + tiles²·nc·B·G)·256, 256).
 */
export const ssdPrepCbKernel = defineKernel({
  name: "ssdPrepCb",
  params: { ...ssdDims, n: "u32", seg: "u32", prepGroups: "u32", cbTiles: "u32" },
  buffers: { dt: "read", A: "read", dl: "rw", Bm: "read", Cm: "read", cb: "rw" },
  body: `${segScanWgsl(SSD_LINEAR_GROUP, "f32", false)}
${tileDecl}
fn prep(flat: u32, lid: u32) {
  let item = min(flat / p.seg, p.n - 1u);
  let i = flat % p.seg;
  let bh = item / p.nc;
  let b = bh / p.H;
  let h = bh % p.H;
  let t0 = (item % p.nc) * p.Lc;
  let L = min(p.Lc, p.T - t0);
  // Threads past the last chunk or the chunk's end add 0; none returns before the barriers.
  let valid = flat / p.seg < p.n && i < L;
  var d = 0.0;
  var da = 0.0;
  if (valid) {
    d = dt[(b * p.T + t0 + i) * p.H + h];
    da = d * A[h];
  }
  let lam = segScan(lid, p.seg, da);
  if (valid) {
    dl[(bh * p.T + t0 + i) * 2u] = d;
    dl[(bh * p.T + t0 + i) * 2u + 1u] = lam;
  }
}
fn cbTile(wg: vec3u, ly: u32, lx: u32) {
  let nT = (p.Lc + ${TILE - 1}u) / ${TILE}u;
  let ti = wg.x / nT;
  let tj = wg.x % nT;
  let b = wg.z / p.G;
  let g = wg.z % p.G;
  let t0 = wg.y * p.Lc;
  let L = min(p.Lc, p.T - t0);
  if (tj > ti || ti * ${TILE}u >= L) { return; }
  let i = ti * ${TILE}u + ly;
  let j = tj * ${TILE}u + lx;
  let jl = tj * ${TILE}u + ly;
  var acc = 0.0;
  for (var n0 = 0u; n0 < p.N; n0 += ${TILE}u) {
    let n = n0 + lx;
    ta[ly * ${TILE}u + lx] = select(0.0, Cm[((b * p.T + t0 + i) * p.G + g) * p.N + n], i < L && n < p.N);
    // B tile stored transposed (tb[n][j]) so that tileDot sums over n
    tb[lx * ${TILE}u + ly] = select(0.0, Bm[((b * p.T + t0 + jl) * p.G + g) * p.N + n], jl < L && n < p.N);
    workgroupBarrier();
    acc += tileDot(ly, lx);
    workgroupBarrier();
  }
  if (i < L && j < L) { cb[((b * p.nc + wg.y) * p.G + g) * p.Lc * p.Lc + i * p.Lc + j] = acc; }
}
@compute @workgroup_size(${SSD_LINEAR_GROUP})
fn main(@builtin(workgroup_id) wgid: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let w = wgid.x + wgid.y * ng.x;
  if (w < p.prepGroups) {
    prep(w * ${SSD_LINEAR_GROUP}u + lid, lid);
    return;
  }
  let j = w - p.prepGroups;
  let perZ = p.cbTiles * p.nc;
  if (j >= perZ * p.B * p.G) { return; }
  cbTile(vec3u(j % p.cbTiles, (j / p.cbTiles) % p.nc, j / perZ), lid / ${TILE}u, lid % ${TILE}u);
}`,
});

/**
 * out[b,h,c,p,n] = Σ_j coef_j·U[j,p]·V[j,n] over the chunk, grid (P/16·N/16 tiles, nc, B·H):
 *   mode 0 (forward chunk state): U = x, V = B, coef = w_j; also writes Ec to cdecay[b,h,c]
 *   mode 1 (backward):            U = gy, V = C, coef = E_j (the state gradient from outputs)
 */
/** WGSL: ssdChunkOuter's per-position coefficient (mode 0 forward, 1 backward). */
export const chunkOuterCoef = `
fn coef(k: Chunk, j: u32) -> f32 {
  if (p.mode == 0u) { return toEnd(k, j) * dtAt(k, j); }
  return fromStart(k, j);
}
`;

/** WGSL after a tile entry (`wg`, `ly`, `lx` bound): ssdChunkOuter's tile; closes the function. */
export const chunkOuterMain = `
  let k = chunkOf(wg.y, wg.z);
  let nN = (p.N + ${TILE - 1}u) / ${TILE}u;
  let pp = (wg.x / nN) * ${TILE}u + ly;
  let n = (wg.x % nN) * ${TILE}u + lx;
  let p0 = (wg.x / nN) * ${TILE}u;
  var acc = 0.0;
  for (var j0 = 0u; j0 < k.L; j0 += ${TILE}u) {
    let j = j0 + ly;
    var uv = 0.0;
    if (j < k.L && p0 + lx < p.P) { uv = coef(k, j) * u[xRow(k, j) + p0 + lx]; }
    ta[lx * ${TILE}u + ly] = uv; // ta[p][j]
    tb[ly * ${TILE}u + lx] = select(0.0, v[bcRow(k, min(j, k.L - 1u)) + n], j < k.L && n < p.N);
    workgroupBarrier();
    acc += tileDot(ly, lx);
    workgroupBarrier();
  }
  if (pp < p.P && n < p.N) { out[stateAt(k) + pp * p.N + n] = acc; }
  if (p.mode == 0u && wg.x == 0u && ly == 0u && lx == 0u) {
    cdecay[k.bh * p.nc + k.c] = fromStart(k, k.L - 1u);
  }
}`;

export const ssdChunkOuterKernel = defineKernel({
  name: "ssdChunkOuter",
  params: { ...ssdDims, mode: "u32" },
  buffers: { u: "read", dl: "read", v: "read", seq: "read:i32", out: "rw", cdecay: "rw" },
  body: `${chunkHelpers}${tileDecl}${chunkOuterCoef}
${tileEntry}${chunkOuterMain}`,
});

/** Inter-chunk recurrence, one thread per (b, h, e < P·N); n = B·H·P·N items. */
export const ssdStatePassKernel = defineKernel({
  name: "ssdStatePass",
  params: { nc: "u32", PN: "u32", n: "u32", hasS0: "u32" },
  buffers: { sloc: "read", cdecay: "read", s0: "read", states: "rw", last: "rw" },
  body: `${flatEntry(SSD_LINEAR_GROUP)}
  let bh = i / p.PN;
  let e = i % p.PN;
  var s = 0.0;
  if (p.hasS0 != 0u) { s = s0[i]; }
  for (var c = 0u; c < p.nc; c++) {
    let o = (bh * p.nc + c) * p.PN + e;
    states[o] = s;
    s = cdecay[bh * p.nc + c] * s + sloc[o];
  }
  last[i] = s;
}`,
});

/** y = M·X + diag(E)·C·S_prevᵀ (+ D_h·X); grid (L/16·P/16 tiles, nc, B·H). */
export const ssdChunkOutKernel = defineKernel({
  name: "ssdChunkOut",
  params: { ...ssdDims, hasD: "u32" },
  buffers: {
    x: "read",
    dl: "read",
    Cm: "read",
    cb: "read",
    states: "read",
    seq: "read:i32",
    D: "read",
    y: "rw",
  },
  body: `${chunkHelpers}${cbHelpers}${tileDecl}
${tileEntry}
  let k = chunkOf(wg.y, wg.z);
  let nP = (p.P + ${TILE - 1}u) / ${TILE}u;
  let ti = wg.x / nP;
  let p0 = (wg.x % nP) * ${TILE}u;
  if (ti * ${TILE}u >= k.L) { return; }
  let i = ti * ${TILE}u + ly;
  let pp = p0 + lx;
  var acc = 0.0;
  for (var tj = 0u; tj <= ti; tj++) {
    let j = tj * ${TILE}u + lx;
    ta[ly * ${TILE}u + lx] = select(0.0, mval(k, min(i, k.L - 1u), min(j, i)), i < k.L && j <= i);
    let jr = tj * ${TILE}u + ly;
    tb[ly * ${TILE}u + lx] = select(0.0, x[xRow(k, min(jr, k.L - 1u)) + min(pp, p.P - 1u)], jr < k.L && pp < p.P);
    workgroupBarrier();
    acc += tileDot(ly, lx);
    workgroupBarrier();
  }
  var accS = 0.0;
  for (var n0 = 0u; n0 < p.N; n0 += ${TILE}u) {
    let n = n0 + lx;
    ta[ly * ${TILE}u + lx] = select(0.0, Cm[bcRow(k, min(i, k.L - 1u)) + min(n, p.N - 1u)], i < k.L && n < p.N);
    let ps = p0 + ly;
    // S_prev tile stored transposed (tb[n][p]) from coalesced reads along n
    tb[lx * ${TILE}u + ly] = select(0.0, states[stateAt(k) + min(ps, p.P - 1u) * p.N + min(n, p.N - 1u)], ps < p.P && n < p.N);
    workgroupBarrier();
    accS += tileDot(ly, lx);
    workgroupBarrier();
  }
  if (i < k.L && pp < p.P) {
    var v = acc + fromStart(k, i) * accS;
    if (p.hasD != 0u) { v += D[k.h] * x[xRow(k, i) + pp]; }
    y[xRow(k, i) + pp] = v;
  }
}`,
});
