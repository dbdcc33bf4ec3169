/*
 * Strided block copy, the one kernel under concat, split, stack and sliceRows:
 *   dst[r·ldd + offd + j] = src[r·lds + offs + j],  r < rows, j < w
 */
import { defineKernel, flatEntry } from "../kernel-def.js";

export const COPY_GROUP = 256;

export const copyRowsKernel = defineKernel({
  name: "copy_rows",
  params: { rows: "u32", w: "u32", lds: "u32", offs: "u32", ldd: "u32", offd: "u32" },
  buffers: { src: "read", dst: "rw" },
  body: `${flatEntry(COPY_GROUP, "p.rows * p.w", "f")}
  let r = f / p.w;
  let j = f % p.w;
  dst[r * p.ldd + p.offd + j] = src[r * p.lds + p.offs + j];
}`,
});
