/*
 * Embedding gather and its deterministic scatter-add backward.
 *   forward:  y[i, j] = W[ids[i], j]   (ids [n] i32, W [V, D], y [n, D]); an id outside [0, V)
 *             gives a row of NaN (the kernel never reads out of bounds, and the loss shows it)
 *   backward: ∂W[v, j] = Σ_{i : ids[i] = v} g[i, j], summed in increasing i — the order of the CPU
 *             op, so each row gets the same additions in the same order. No float atomics: the
 *             positions of each id are bucketed (a counting sort) and each ∂W element is one
 *             thread's loop over its bucket:
 *     count  c[v] = #{i : ids[i] = v}                 (integer atomics: the counts are exact)
 *     scan   s[v] = Σ_{u<v} c[u]                       (one workgroup, fixed order)
 *     bucket u[s[v] + k] = i, k from an atomic cursor  (order within a bucket arbitrary …)
 *     rank   o[s[v] + #{i' in bucket v : i' < i}] = i  (… made increasing here)
 *     sum    ∂W[v, j] = Σ_k g[o[s[v] + k], j]
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { QUIET_NAN_WGSL } from "./wgsl-nan.js";

export const EMB_GROUP = 256;
const head = (bound: string) => flatEntry(EMB_GROUP, bound, "f");

export const embeddingGatherKernel = defineKernel({
  name: "embedding_gather",
  params: { n: "u32", V: "u32", D: "u32" },
  buffers: { ids: "read:i32", w: "read", y: "rw" },
  body: `${QUIET_NAN_WGSL}
${head("p.n * p.D")}
  let i = f / p.D;
  let j = f % p.D;
  let id = ids[i];
  if (id < 0 || u32(id) >= p.V) { y[f] = quietNan(); return; }
  y[f] = w[u32(id) * p.D + j];
}`,
});

export const embeddingCountKernel = defineKernel({
  name: "embedding_count",
  params: { n: "u32", V: "u32" },
  buffers: { ids: "read:i32", count: "rw:atomic" },
  body: `${head("p.n")}
  let id = ids[f];
  if (id < 0 || u32(id) >= p.V) { return; }
  atomicAdd(&count[u32(id)], 1u);
}`,
});

const SCAN_THREADS = 256;
export const embeddingScanKernel = defineKernel({
  name: "embedding_scan",
  params: { V: "u32" },
  buffers: { count: "read:u32", start: "rw:u32" },
  body: `
var<workgroup> part: array<u32, ${SCAN_THREADS}>;

@compute @workgroup_size(${SCAN_THREADS})
fn main(@builtin(local_invocation_index) li: u32) {
  let per = (p.V + ${SCAN_THREADS - 1}u) / ${SCAN_THREADS}u;
  let lo = min(li * per, p.V);
  let hi = min(lo + per, p.V);
  var s = 0u;
  for (var v = lo; v < hi; v++) { s += count[v]; }
  part[li] = s;
  workgroupBarrier();
  // Inclusive scan of the per-thread sums (Hillis–Steele).
  for (var d = 1u; d < ${SCAN_THREADS}u; d *= 2u) {
    var add = 0u;
    if (li >= d) { add = part[li - d]; }
    workgroupBarrier();
    part[li] += add;
    workgroupBarrier();
  }
  var run = part[li] - s;
  for (var v = lo; v < hi; v++) { start[v] = run; run += count[v]; }
}`,
});

export const embeddingBucketKernel = defineKernel({
  name: "embedding_bucket",
  params: { n: "u32", V: "u32" },
  buffers: { ids: "read:i32", start: "read:u32", cursor: "rw:atomic", bucket: "rw:u32" },
  body: `${head("p.n")}
  let id = ids[f];
  if (id < 0 || u32(id) >= p.V) { return; }
  let v = u32(id);
  bucket[start[v] + atomicAdd(&cursor[v], 1u)] = f;
}`,
});

export const embeddingRankKernel = defineKernel({
  name: "embedding_rank",
  params: { n: "u32", V: "u32" },
  buffers: {
    ids: "read:i32",
    start: "read:u32",
    count: "read:u32",
    bucket: "read:u32",
    order: "rw:u32",
  },
  body: `${head("p.n")}
  let id = ids[f];
  if (id < 0 || u32(id) >= p.V) { return; }
  let v = u32(id);
  let s = start[v];
  var r = 0u;
  for (var k = s; k < s + count[v]; k++) { if (bucket[k] < f) { r++; } }
  order[s + r] = f;
}`,
});

export const embeddingSumKernel = defineKernel({
  name: "embedding_sum",
  params: { V: "u32", D: "u32" },
  buffers: { start: "read:u32", count: "read:u32", order: "read:u32", g: "read", gw: "rw" },
  body: `${head("p.V * p.D")}
  let v = f / p.D;
  let j = f % p.D;
  let s = start[v];
  var acc = 0.0;
  for (var k = s; k < s + count[v]; k++) { acc += g[order[k] * p.D + j]; }
  gw[f] = acc;
}`,
});
