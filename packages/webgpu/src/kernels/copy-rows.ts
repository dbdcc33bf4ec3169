/**
 * Strided block copy, the one kernel under concat, split, stack and sliceRows:
 *   dst[r·ldd + offd + j] = src[r·lds + offs + j],  r < rows, j < w
 */
import { defineKernel, flatIndex } from "../kernel-def.js";

export const COPY_GROUP = 256;

export const copyRowsKernel = defineKernel({
  name: "copy_rows",
  params: { rows: "u32", w: "u32", lds: "u32", offs: "u32", ldd: "u32", offd: "u32" },
  buffers: { src: "read", dst: "rw" },
  body: `@compute @workgroup_size(${COPY_GROUP})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) ng: vec3u) {
  let f = ${flatIndex(COPY_GROUP)};
  if (f >= p.rows * p.w) { return; }
  let r = f / p.w;
  let j = f % p.w;
  dst[r * p.ldd + p.offd + j] = src[r * p.lds + p.offs + j];
}`,
});
