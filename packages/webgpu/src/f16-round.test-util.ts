/**
 * The CPU side of the f16 tests: IEEE binary16 round-to-nearest-even of a number (what
 * `Math.f16round` does in newer engines; Node 20 lacks it) and the decoding of f16 bit patterns.
 */

/** The nearest binary16 value to x (ties to even), as a number; ±Infinity past 65520. */
export function f16Round(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  if (a >= 65520) return Math.sign(x) * Number.POSITIVE_INFINITY;
  // the spacing of f16 values around a: 2^(e−10) for normals (e ≥ −14), 2^−24 for subnormals
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  const q = 2 ** (Math.max(e, -14) - 10);
  const m = a / q; // exact: q is a power of two
  let r = Math.floor(m);
  const frac = m - r;
  if (frac > 0.5 || (frac === 0.5 && r % 2 === 1)) r++;
  return Math.sign(x) * r * q;
}

/** The value of a 16-bit binary16 pattern. */
export function halfValue(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const man = bits & 0x3ff;
  if (exp === 0x1f) return man ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  if (exp === 0) return sign * man * 2 ** -24;
  return sign * (1 + man / 1024) * 2 ** (exp - 15);
}

/** The n f16 values of words holding two each (low half first), as numbers. */
export function unpackHalves(words: Uint32Array, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(halfValue((words[i >> 1]! >>> (16 * (i & 1))) & 0xffff));
  return out;
}
