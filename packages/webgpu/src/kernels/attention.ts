/*
 * Tiled causal grouped-query attention, FlashAttention-2 style (docs/model.md §4), the WGSL twin
 * of @loop/attention's flashForward / flashBackward:
 *   q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd], lse [B, Hq, T];
 *   query head j reads KV head g = floor(j / G), G = Hq/Hkv; c = 1/sqrt(hd);
 *   key s is visible to query t iff s ≤ t and (with documents) seq[b, s] = seq[b, t]
 *   (seq is non-decreasing along a row, so this is "s ≥ the start of t's document").
 * Forward, one workgroup per (b, j, tile of 64 queries), one thread per query row: the K and V
 * tiles of BK keys are staged in workgroup memory and every thread keeps its running max m, sum l
 * and output row O (online softmax); y = O / l, lse = m + ln l.
 * Backward with Dvec[t] = Σ_e ∂y[t,e]·y[t,e] (stored beside lse, which the forward writes into
 * the first half of ld = [lse | Dvec]: the dQ kernel computes and stores each query row's Dvec
 * as it starts, the dvec kernel only where dQ is not wanted) and P = e^{c·q·kᵀ − lse}:
 *   dK, dV: one workgroup per (b, g, tile of 64 keys), 4 threads per key (256 a workgroup),
 *     looping over the G query heads of g and the query tiles (staged in workgroup memory) at or
 *     after the keys, 8 query rows at a time: the 64·8 pairs' P and dS = P·(∂y·v − Dvec) are
 *     computed by the 256 threads (each pair's dot products by one thread, e in order) into
 *     workgroup memory, then each thread adds the 8 rows in order to its quarter of its key's row
 *     (elements e ≡ part mod 4): dv += P·∂y, dk += c·dS·q;
 *   dQ (runs first): one workgroup per (b, j, tile of 64 queries), one thread per query, looping
 *     over the key tiles (staged): dq += c·P·(∂y·v − Dvec)·k.
 * Each output element is summed by one thread in a fixed order: no atomics, the same numbers
 * every run (the dK dV order is the one-thread-per-key order: heads, then query rows). hd and
 * the tile depth are compiled in (kernels are made per head_dim, and the depth of a staged tile
 * is what fits the device's workgroup memory, at most 64 rows).
 */
import { defineKernel, flatEntry, type Kernel } from "../kernel-def.js";
import { getOrMake } from "../memo.js";

/** Threads per workgroup = query (or key) rows per workgroup. */
export const ATTN_ROWS = 64;
export const DVEC_GROUP = 256;
const NEG = "-3.0e38"; // below any score; e^{NEG − m} = 0 without infinities

/** Rows of a staged tile of two [rows, hd] matrices plus three scalars per row. */
export function tileDepth(hd: number, workgroupBytes: number): number {
  const floats = Math.floor(workgroupBytes / 4);
  const rows = Math.min(ATTN_ROWS, Math.floor(floats / (2 * hd + 3)));
  if (rows < 1)
    throw new Error(
      `webgpu attention: head_dim ${hd} does not fit the device's ${workgroupBytes} bytes of workgroup memory`,
    );
  return rows;
}

const PARAMS = { T: "u32", Hq: "u32", Hkv: "u32", G: "u32", c: "f32", docs: "u32" } as const;
/** The backward kernels' inputs: ld = [lse | Dvec] (dvecKernel), nl = B·Hq·T its half. */
const BACKWARD_PARAMS = { ...PARAMS, nl: "u32" } as const;
const BACKWARD_INPUTS = {
  q: "read",
  k: "read",
  v: "read",
  seq: "read:i32",
  ld: "read",
  gy: "read",
} as const;

/** Workgroup arrays of a staged key (or query) tile: two [BK, hd] matrices and a doc index. */
function stage(hd: number, bk: number, extra = ""): string {
  return `const HD: u32 = ${hd}u;
const ROWS: u32 = ${ATTN_ROWS}u;
const BK: u32 = ${bk}u;
var<workgroup> ta: array<f32, ${bk * hd}>;
var<workgroup> tb: array<f32, ${bk * hd}>;
var<workgroup> tdoc: array<i32, ${bk}>;
${extra}`;
}

/** WGSL: stage the K and V rows c0..c0+bc−1 of (b, g) into ta, tb and their doc indices. */
const STAGE_KV = `
    workgroupBarrier();
    for (var i = lid; i < bc * HD; i += ROWS) {
      let ko = ((b * p.T + c0 + i / HD) * p.Hkv + g) * HD + i % HD;
      ta[i] = k[ko];
      tb[i] = v[ko];
    }
    if (p.docs != 0u) { for (var i = lid; i < bc; i += ROWS) { tdoc[i] = seq[b * p.T + c0 + i]; } }
    workgroupBarrier();`;

/**
 * WGSL entry of the per-query kernels, one thread per query row: b, j, g, the query row t
 * (clamped: tq) and its doc.
 */
const QUERY_ENTRY = `@compute @workgroup_size(${ATTN_ROWS})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let b = wid.y / p.Hq;
  let j = wid.y % p.Hq;
  let g = j / p.G;
  let t = wid.x * ROWS + lid;
  let tq = min(t, p.T - 1u);
  let qo = ((b * p.T + tq) * p.Hq + j) * HD;
  var myDoc = 0;
  if (p.docs != 0u) { myDoc = seq[b * p.T + tq]; }
  let kEnd = min(p.T, wid.x * ROWS + ROWS);`;

/** WGSL: the number of keys of the staged tile at or before tq. */
const N_VALID = `
    var nValid = 0u;
    if (tq >= c0) { nValid = min(bc, tq - c0 + 1u); }`;

function forward(hd: number, bk: number): Kernel {
  return defineKernel({
    name: `attention/forward(hd=${hd})`,
    params: PARAMS,
    buffers: { q: "read", k: "read", v: "read", seq: "read:i32", y: "rw", lse: "rw" },
    body: `${stage(hd, bk)}
${QUERY_ENTRY}
  var qr: array<f32, HD>;
  var o: array<f32, HD>;
  for (var e = 0u; e < HD; e++) { qr[e] = q[qo + e] * p.c; o[e] = 0.0; }
  var sc: array<f32, BK>;
  var m = ${NEG};
  var l = 0.0;
  for (var c0 = 0u; c0 < kEnd; c0 += BK) {
    let bc = min(BK, p.T - c0);
    ${STAGE_KV}
    ${N_VALID}
    var rowMax = ${NEG};
    var seen = false;
    for (var col = 0u; col < nValid; col++) {
      if (p.docs == 0u || tdoc[col] == myDoc) {
        var acc = 0.0;
        for (var e = 0u; e < HD; e++) { acc += qr[e] * ta[col * HD + e]; }
        sc[col] = acc;
        rowMax = max(rowMax, acc);
        seen = true;
      }
    }
    if (seen) {
      let mNew = max(m, rowMax);
      let alpha = exp(m - mNew);
      for (var e = 0u; e < HD; e++) { o[e] *= alpha; }
      var sum = 0.0;
      for (var col = 0u; col < nValid; col++) {
        if (p.docs == 0u || tdoc[col] == myDoc) {
          let pr = exp(sc[col] - mNew);
          sum += pr;
          for (var e = 0u; e < HD; e++) { o[e] += pr * tb[col * HD + e]; }
        }
      }
      l = l * alpha + sum;
      m = mNew;
    }
  }
  if (t < p.T) {
    let inv = 1.0 / l;
    for (var e = 0u; e < HD; e++) { y[qo + e] = o[e] * inv; }
    lse[(b * p.Hq + j) * p.T + t] = m + log(l);
  }
}`,
  });
}

function backwardQ(hd: number, bk: number): Kernel {
  return defineKernel({
    name: `attention/backward-dq(hd=${hd})`,
    params: BACKWARD_PARAMS,
    // writes Dvec into ld's second half (read by the dK dV kernel after it)
    buffers: { ...BACKWARD_INPUTS, ld: "rw", y: "read", dq: "rw" },
    body: `${stage(hd, bk)}
${QUERY_ENTRY}
  var qr: array<f32, HD>;
  var gr: array<f32, HD>;
  var acc: array<f32, HD>;
  for (var e = 0u; e < HD; e++) { qr[e] = q[qo + e] * p.c; gr[e] = gy[qo + e]; acc[e] = 0.0; }
  let li = (b * p.Hq + j) * p.T + tq;
  let lrow = ld[li];
  var drow = 0.0;
  for (var e = 0u; e < HD; e++) { drow += gr[e] * y[qo + e]; }
  if (t < p.T) { ld[p.nl + li] = drow; }
  for (var c0 = 0u; c0 < kEnd; c0 += BK) {
    let bc = min(BK, p.T - c0);
    ${STAGE_KV}
    ${N_VALID}
    for (var col = 0u; col < nValid; col++) {
      if (p.docs == 0u || tdoc[col] == myDoc) {
        var s = 0.0;
        var dp = 0.0;
        for (var e = 0u; e < HD; e++) {
          s += qr[e] * ta[col * HD + e];
          dp += gr[e] * tb[col * HD + e];
        }
        let ds = exp(s - lrow) * (dp - drow);
        for (var e = 0u; e < HD; e++) { acc[e] += ds * ta[col * HD + e]; }
      }
    }
  }
  if (t < p.T) {
    for (var e = 0u; e < HD; e++) { dq[qo + e] = p.c * acc[e]; }
  }
}`,
  });
}

/** Threads per key in the dK dV kernel, each owning the elements e ≡ part (mod KV_PARTS) of its rows. */
export const KV_PARTS = 4;
/** Query rows whose (key, query) pairs the dK dV kernel computes at once, between two barriers. */
export const KV_SUB = 8;

/**
 * Query rows of the dK dV kernel's staged tile: what fits beside its two [KV_SUB, 64] blocks of
 * P and dS (at most 64 rows).
 */
export function kvTileDepth(hd: number, workgroupBytes: number): number {
  return tileDepth(hd, workgroupBytes - 4 * 2 * KV_SUB * ATTN_ROWS);
}

function backwardKV(hd: number, bq: number): Kernel {
  const ept = Math.ceil(hd / KV_PARTS);
  const threads = ATTN_ROWS * KV_PARTS;
  return defineKernel({
    name: `attention/backward-dkdv(hd=${hd})`,
    params: BACKWARD_PARAMS,
    buffers: { ...BACKWARD_INPUTS, dk: "rw", dv: "rw" },
    body: `${stage(
      hd,
      bq,
      `var<workgroup> tl: array<f32, ${bq}>;
var<workgroup> td: array<f32, ${bq}>;
const PARTS: u32 = ${KV_PARTS}u;
const SUB: u32 = ${KV_SUB}u;
const EPT: u32 = ${ept}u;
const WG: u32 = ${threads}u;
var<workgroup> pP: array<f32, ${KV_SUB * ATTN_ROWS}>;
var<workgroup> pS: array<f32, ${KV_SUB * ATTN_ROWS}>;`,
    )}
@compute @workgroup_size(${threads})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let key = lid % ROWS;
  let part = lid / ROWS;
  let b = wid.y / p.Hkv;
  let g = wid.y % p.Hkv;
  let c0 = wid.x * ROWS;
  let s = c0 + key;
  let sk = min(s, p.T - 1u);
  let ko = ((b * p.T + sk) * p.Hkv + g) * HD;
  var kr: array<f32, HD>;
  var vr: array<f32, HD>;
  // this thread's share of the key's dK and dV rows: elements e = part + i·PARTS
  var dka: array<f32, EPT>;
  var dva: array<f32, EPT>;
  for (var e = 0u; e < HD; e++) { kr[e] = k[ko + e] * p.c; vr[e] = v[ko + e]; }
  for (var i = 0u; i < EPT; i++) { dka[i] = 0.0; dva[i] = 0.0; }
  var myDoc = 0;
  if (p.docs != 0u) { myDoc = seq[b * p.T + sk]; }
  for (var jj = 0u; jj < p.G; jj++) {
    let j = g * p.G + jj;
    // Queries before c0 see no key of this tile.
    for (var r0 = c0; r0 < p.T; r0 += BK) {
      let br = min(BK, p.T - r0);
      workgroupBarrier();
      for (var i = lid; i < br * HD; i += WG) {
        let qo = ((b * p.T + r0 + i / HD) * p.Hq + j) * HD + i % HD;
        ta[i] = q[qo];
        tb[i] = gy[qo];
      }
      for (var i = lid; i < br; i += WG) {
        let li = (b * p.Hq + j) * p.T + r0 + i;
        tl[i] = ld[li];
        td[i] = ld[p.nl + li];
        if (p.docs != 0u) { tdoc[i] = seq[b * p.T + r0 + i]; }
      }
      workgroupBarrier();
      for (var r1 = 0u; r1 < br; r1 += SUB) {
        let nr = min(SUB, br - r1);
        // P and dS of the pairs (key, rows r1 + m): the key's PARTS threads take every PARTS-th m
        for (var m = part; m < SUB; m += PARTS) {
          let row = r1 + m;
          var pr = 0.0;
          var ds = 0.0;
          if (m < nr && r0 + row >= sk && (p.docs == 0u || tdoc[row] == myDoc)) {
            var sc = 0.0;
            var dp = 0.0;
            for (var e = 0u; e < HD; e++) {
              sc += kr[e] * ta[row * HD + e];
              dp += vr[e] * tb[row * HD + e];
            }
            pr = exp(sc - tl[row]);
            ds = pr * (dp - td[row]);
          }
          pP[m * ROWS + key] = pr;
          pS[m * ROWS + key] = ds;
        }
        workgroupBarrier();
        // every thread adds the rows in order to its elements: one thread, one order per element
        for (var m = 0u; m < nr; m++) {
          let row = r1 + m;
          if (r0 + row >= sk && (p.docs == 0u || tdoc[row] == myDoc)) {
            let pr = pP[m * ROWS + key];
            let ds = pS[m * ROWS + key];
            for (var i = 0u; i < EPT; i++) {
              let e = part + i * PARTS;
              if (e < HD) {
                dva[i] += pr * tb[row * HD + e];
                dka[i] += ds * ta[row * HD + e];
              }
            }
          }
        }
        workgroupBarrier();
      }
    }
  }
  if (s < p.T) {
    for (var i = 0u; i < EPT; i++) {
      let e = part + i * PARTS;
      if (e < HD) {
        dk[ko + e] = p.c * dka[i];
        dv[ko + e] = dva[i];
      }
    }
  }
}`,
  });
}

/**
 * The second half of ld = [lse | Dvec], each [B, Hq, T] (one buffer keeps the dK dV kernel at 8
 * bindings), with Dvec[b, j, t] = Σ_e ∂y[b, t, j, e]·y[b, t, j, e], one thread per row of
 * n = B·T·Hq: where q needs no gradient (else the dQ kernel writes it).
 */
export const dvecKernel = defineKernel({
  name: "attention/dvec",
  params: { n: "u32", T: "u32", Hq: "u32", hd: "u32" },
  buffers: { y: "read", gy: "read", ld: "rw" },
  body: `
${flatEntry(DVEC_GROUP, "p.n", "row")}
  // row = (b·T + t)·Hq + j
  let j = row % p.Hq;
  let bt = row / p.Hq;
  var acc = 0.0;
  for (var e = 0u; e < p.hd; e++) { acc += gy[row * p.hd + e] * y[row * p.hd + e]; }
  let li = ((bt / p.T) * p.Hq + j) * p.T + bt % p.T;
  ld[p.n + li] = acc;
}`,
});

export interface AttentionKernels {
  forward: Kernel;
  backwardQ: Kernel;
  backwardKV: Kernel;
  /** Keys per staged tile of the forward and dQ kernels. */
  depth: number;
  /** Queries per staged tile of the dK dV kernel. */
  kvDepth: number;
}

const made = new Map<string, AttentionKernels>();

/** The kernels for head_dim `hd` on a device with `workgroupBytes` of workgroup memory. */
export function attentionKernels(hd: number, workgroupBytes: number): AttentionKernels {
  const depth = tileDepth(hd, workgroupBytes);
  const kvDepth = kvTileDepth(hd, workgroupBytes);
  const key = `${hd},${depth},${kvDepth}`;
  return getOrMake(made, key, () => ({
    forward: forward(hd, depth),
    backwardQ: backwardQ(hd, depth),
    backwardKV: backwardKV(hd, kvDepth),
    depth,
    kvDepth,
  }));
}
