/**
 * WGSL: `segScan(lid, seg, v)`, an inclusive prefix sum of `v` (type `type`: f32, vec2f…) over
 * aligned segments of `seg` consecutive threads of a 1-D workgroup of `size` threads (`seg` a
 * power of two dividing `size`, the same for every thread), Hillis–Steele in workgroup memory:
 * log2(seg) steps, each a fixed pairing, so the same numbers every run. `reverse` sums from each
 * segment's end instead (suffix sums). Every thread must call it (it holds barriers); afterwards
 * `scanBuf[i]` holds thread i's result until the workgroup next writes it.
 */
export function segScanWgsl(size: number, type: string, reverse: boolean): string {
  const neighbour = reverse
    ? "if (pos + d < seg) { add = scanBuf[lid + d]; }"
    : "if (pos >= d) { add = scanBuf[lid - d]; }";
  return `
var<workgroup> scanBuf: array<${type}, ${size}>;
fn segScan(lid: u32, seg: u32, v: ${type}) -> ${type} {
  let pos = lid % seg;
  var acc = v;
  scanBuf[lid] = acc;
  workgroupBarrier();
  for (var d = 1u; d < seg; d <<= 1u) {
    var add = ${type}();
    ${neighbour}
    workgroupBarrier();
    acc += add;
    scanBuf[lid] = acc;
    workgroupBarrier();
  }
  return acc;
}`;
}

/** The smallest power of two ≥ n (segments of a `segScan` holding n values). */
export function segmentOf(n: number): number {
  let s = 1;
  while (s < n) s *= 2;
  return s;
}
