/**
 * max |got − want| / max |want| over all elements — the relative error the packages' tests
 * compare kernels and decoding paths by. Infinity when the lengths differ; when want is all
 * zeros, the absolute max |got − want|.
 */
export function relErr(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Number.POSITIVE_INFINITY;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
    scale = Math.max(scale, Math.abs(want[i]!));
  }
  return scale === 0 ? diff : diff / scale;
}
