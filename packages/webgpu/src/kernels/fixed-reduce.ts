/**
 * Deterministic reductions (no atomics; every sum in a fixed order, so the same numbers every
 * run), used by the exit-gate ops (column sums and sums of all live in column-sum.ts):
 *   maskedMean: tf = [term (n) | flag (n)]: N = Σ flag, out[0] = Σ term / (N·scale) (NaN when
 *               N = 0, like the CPU losses), count[0] = N   (one workgroup: thread l sums
 *               i ≡ l (mod 256) in order, then a fixed tree over the 256 partial sums); the NaN
 *               comes in as bits (NAN_BITS): WGSL has no NaN constant
 */
import { defineKernel } from "../kernel-def.js";

/** A quiet NaN's float32 bits, for maskedMean's nanBits. */
export const NAN_BITS = 0x7fc00000;

export const REDUCE_GROUP = 256;

/** WGSL: tree-sum `buf` (REDUCE_GROUP entries, `lid` this thread) into buf[0]. */
export const TREE_SUM = `
  workgroupBarrier();
  for (var s = ${REDUCE_GROUP / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) { buf[lid] += buf[lid + s]; }
    workgroupBarrier();
  }`;

const BUF = `var<workgroup> buf: array<f32, ${REDUCE_GROUP}>;`;

/** WGSL header of a kernel with one workgroup per row m < p.M (grid(M, 1), folded over x, y). */
export const ROW_MAIN = `${BUF}
@compute @workgroup_size(${REDUCE_GROUP})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) ng: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let m = wid.x + wid.y * ng.x;
  if (m >= p.M) { return; }`;

/**
 * WGSL in a ROW_MAIN kernel: rowLse = ln Σ_{v<p.V} e^{x[o + v]} (max-shifted), known to every
 * thread; a strided max and a strided sum, each tree-reduced in a fixed order.
 */
export const ROW_LSE = `
  var mx = -3.0e38;
  for (var v = lid; v < p.V; v += ${REDUCE_GROUP}u) { mx = max(mx, x[o + v]); }
  buf[lid] = mx;
  workgroupBarrier();
  for (var s = ${REDUCE_GROUP / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) { buf[lid] = max(buf[lid], buf[lid + s]); }
    workgroupBarrier();
  }
  let rowMax = buf[0];
  workgroupBarrier();
  var se = 0.0;
  for (var v = lid; v < p.V; v += ${REDUCE_GROUP}u) { se += exp(x[o + v] - rowMax); }
  buf[lid] = se;
  ${TREE_SUM}
  let rowLse = rowMax + log(buf[0]);`;

export const maskedMeanKernel = defineKernel({
  name: "reduce/maskedMean",
  params: { n: "u32", scale: "f32", nanBits: "u32" },
  buffers: { tf: "read", out: "rw", count: "rw" },
  body: `${BUF}
var<workgroup> cnt: array<f32, ${REDUCE_GROUP}>;
@compute @workgroup_size(${REDUCE_GROUP})
fn main(@builtin(local_invocation_index) lid: u32) {
  var acc = 0.0;
  var c = 0.0;
  for (var i = lid; i < p.n; i += ${REDUCE_GROUP}u) { acc += tf[i]; c += tf[p.n + i]; }
  buf[lid] = acc;
  cnt[lid] = c;
  workgroupBarrier();
  for (var s = ${REDUCE_GROUP / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) { buf[lid] += buf[lid + s]; cnt[lid] += cnt[lid + s]; }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let N = cnt[0];
    if (N == 0.0) { out[0] = bitcast<f32>(p.nanBits); } else { out[0] = buf[0] / (N * p.scale); }
    count[0] = N;
  }
}`,
});
