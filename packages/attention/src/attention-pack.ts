/**
 * Packing helper of the tiled attention kernels: one query tile of a head group copied into
 * contiguous (optionally transposed) scratch so every tile product is a plain row-major GEMM
 * (one head's keys go through @loop/tensor/kernel's transposeInto).
 */
/**
 * A query tile of a head group: the `group` heads starting at `base` (heads hd apart, tokens
 * `ld` apart), tokens r0..r0+br-1, as rows R = jj·br + r. `mode` "rows" writes dst [G·br, hd];
 * "cols" writes the transpose [hd, G·br]; "unpackCols" copies such a transpose back into src.
 */
export function groupTile(
  src: Float32Array,
  base: number,
  ld: number,
  r0: number,
  br: number,
  group: number,
  hd: number,
  dst: Float32Array,
  mode: "rows" | "cols" | "unpackCols",
): void {
  const n = group * br;
  for (let jj = 0; jj < group; jj++) {
    for (let r = 0; r < br; r++) {
      const o = base + (r0 + r) * ld + jj * hd;
      const R = jj * br + r;
      if (mode === "rows") dst.set(src.subarray(o, o + hd), R * hd);
      else if (mode === "cols") for (let e = 0; e < hd; e++) dst[e * n + R] = src[o + e]!;
      else for (let e = 0; e < hd; e++) src[o + e] = dst[e * n + R]!;
    }
  }
}
