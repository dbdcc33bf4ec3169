/*
 * Strided transpose into preallocated scratch: dst[c·ldd + r] = src[off + r·lds + c] for
 * r < rows, c < cols. The tiled kernels (chunked SSD, flash attention, the JS GEMM's packing)
 * transpose an operand once so every block product is a plain row-major GEMM; one loop for all.
 */

/** dst[c·ldd + r] = src[off + r·lds + c] for r < rows, c < cols (reads src row by row). */
export function transposeInto(
  src: Float32Array,
  off: number,
  lds: number,
  rows: number,
  cols: number,
  dst: Float32Array,
  ldd: number,
): void {
  for (let r = 0; r < rows; r++) {
    const s = off + r * lds;
    for (let c = 0; c < cols; c++) dst[c * ldd + r] = src[s + c]!;
  }
}
