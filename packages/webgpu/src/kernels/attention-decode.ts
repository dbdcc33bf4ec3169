/*
 * The read half of attention's decode step (docs/model.md §4; the CPU's `appendAndAttend`): one
 * query per (row, head) over positions 0..n−1 of its row's KV cache, causal GQA:
 *   out[b,j] = Σ_{t<n} softmax_t(c·q[b,j]·kc[s,g,t])·vc[s,g,t],
 *   g = j / (Hq/Hkv), c = 1/√hd, s = rows[b] (hasRows = 1) or b; softmax max-subtracted.
 * Shapes: q [B,Hq,hd] (rotated), kc, vc [S,Hkv,cap,hd], rows i32 [B], scores [B,Hq,n] (scratch:
 * n is only known at run time, too many for workgroup memory) → out [B,Hq,hd].
 * One workgroup of DECODE_GROUP threads per (b, j): the threads take positions t ≡ lid (scores
 * and their max), then the exponentials and their sum, then elements e ≡ lid of the output
 * (each summed over t in order by one thread). The reductions are trees in workgroup memory:
 * the same numbers every run. A state row outside 0..S−1 (the op refuses those it can see)
 * gives zeros rather than another row's values.
 */
import { defineKernel } from "../kernel-def.js";
import { groupSumWgsl } from "./wgsl-group-sum.js";

/** Threads per workgroup (a power of two, for the reduction trees). */
export const DECODE_GROUP = 64;

export const attentionDecodeKernel = defineKernel({
  name: "attentionDecode",
  params: {
    B: "u32",
    Hq: "u32",
    Hkv: "u32",
    hd: "u32",
    S: "u32",
    cap: "u32",
    n: "u32",
    scale: "f32",
    hasRows: "u32",
  },
  buffers: {
    rows: "read:i32",
    q: "read",
    kc: "read",
    vc: "read",
    scores: "rw",
    out: "rw",
  },
  body: `${groupSumWgsl(DECODE_GROUP)}
fn groupMax(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = ${DECODE_GROUP / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) { red[lid] = max(red[lid], red[lid + s]); }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(${DECODE_GROUP})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_id) li: vec3u) {
  let bj = wg.x + wg.y * ng.x;
  // (uniform across the workgroup: every thread returns or none does, so the barriers hold)
  if (bj >= p.B * p.Hq) { return; }
  let lid = li.x;
  let b = bj / p.Hq;
  let j = bj % p.Hq;
  var s = b;
  if (p.hasRows != 0u) { s = u32(rows[b]); }
  let qo = bj * p.hd;
  if (s >= p.S) {
    for (var e = lid; e < p.hd; e += ${DECODE_GROUP}u) { out[qo + e] = 0.0; }
    return;
  }
  let base = (s * p.Hkv + j / (p.Hq / p.Hkv)) * p.cap * p.hd;
  let so = bj * p.n;
  var mx = -3.4028234663852886e38;
  for (var t = lid; t < p.n; t += ${DECODE_GROUP}u) {
    let ko = base + t * p.hd;
    var dot = 0.0;
    for (var e = 0u; e < p.hd; e++) { dot += q[qo + e] * kc[ko + e]; }
    let sc = p.scale * dot;
    scores[so + t] = sc;
    mx = max(mx, sc);
  }
  mx = groupMax(lid, mx);
  var sum = 0.0;
  for (var t = lid; t < p.n; t += ${DECODE_GROUP}u) {
    let w = exp(scores[so + t] - mx);
    scores[so + t] = w;
    sum += w;
  }
  sum = groupSum(lid, sum);
  // the weights were written by other threads of the workgroup
  storageBarrier();
  for (var e = lid; e < p.hd; e += ${DECODE_GROUP}u) {
    var acc = 0.0;
    for (var t = 0u; t < p.n; t++) { acc += scores[so + t] * vc[base + t * p.hd + e]; }
    out[qo + e] = acc / sum;
  }
}`,
});
