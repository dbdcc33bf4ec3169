/**
 * WGSL: `groupSum(lid, v)`, the sum of `v` over a 1-D workgroup of `size` threads (a power of
 * two), a tree in workgroup memory — the same order every run. Every thread must call it (it
 * holds barriers), and every thread gets the total.
 */
export function groupSumWgsl(size: number): string {
  return `
var<workgroup> red: array<f32, ${size}>;
fn groupSum(lid: u32, v: f32) -> f32 {
  red[lid] = v;
  workgroupBarrier();
  for (var s = ${size / 2}u; s > 0u; s >>= 1u) {
    if (lid < s) { red[lid] += red[lid + s]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}`;
}
