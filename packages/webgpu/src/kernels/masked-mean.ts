/*
 * A masked mean in a fixed order (no atomics: the same numbers every run), for the stage losses:
 *   tf = [term (n) | flag (n)]: N = Σ flag, out[0] = Σ term / (N·scale) (NaN when N = 0, like
 *   the CPU losses), count[0] = N. One workgroup: thread l sums i ≡ l (mod 256) in order, then
 *   groupSum's fixed tree. The NaN comes in as bits (NAN_BITS): WGSL has no NaN constant.
 */
import { defineKernel } from "../kernel-def.js";
import { groupSumWgsl } from "./wgsl-group-sum.js";

/** A quiet NaN's float32 bits, for maskedMean's nanBits. */
export const NAN_BITS = 0x7fc00000;

const GROUP = 256;

export const maskedMeanKernel = defineKernel({
  name: "reduce/maskedMean",
  params: { n: "u32", scale: "f32", nanBits: "u32" },
  buffers: { tf: "read", out: "rw", count: "rw" },
  body: `${groupSumWgsl(GROUP)}
@compute @workgroup_size(${GROUP})
fn main(@builtin(local_invocation_index) lid: u32) {
  var acc = 0.0;
  var c = 0.0;
  for (var i = lid; i < p.n; i += ${GROUP}u) { acc += tf[i]; c += tf[p.n + i]; }
  let total = groupSum(lid, acc);
  let N = groupSum(lid, c);
  if (lid == 0u) {
    if (N == 0.0) { out[0] = bitcast<f32>(p.nanBits); } else { out[0] = total / (N * p.scale); }
    count[0] = N;
  }
}`,
});
