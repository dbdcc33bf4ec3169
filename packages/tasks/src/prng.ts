/**
 * The package's own seeded PRNG, so every generator is a pure function of (config, seed) and
 * byte-identical on every machine (32-bit integer maths only, no platform `Math.random`).
 *
 * - Generator: xoshiro128** 1.1 (Blackman & Vigna, 2018), 128-bit state, 32-bit outputs.
 * - Seeding: the four state words come from splitmix32 (the 32-bit variant of splitmix64's
 *   finaliser constants from MurmurHash3 `fmix32`) run from the seed.
 * - `deriveSeed(seed, ...parts)` folds numbers and strings into a new 32-bit seed (FNV-1a over
 *   the parts' bytes, then `fmix32`), giving independent streams such as "example i of seed s".
 */

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function checkSeed(seed: number, what: string): void {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`${what}: seed must be an integer in [0, 2^32 - 1], got ${seed}`);
}

/** A 32-bit seed derived from `seed` and a list of parts (non-negative integers or strings). */
export function deriveSeed(seed: number, ...parts: (number | string)[]): number {
  checkSeed(seed, "deriveSeed");
  let h = 0x811c9dc5 ^ seed;
  const byte = (b: number) => {
    h ^= b & 0xff;
    h = Math.imul(h, 0x01000193);
  };
  const word = (w: number) => {
    byte(w);
    byte(w >>> 8);
    byte(w >>> 16);
    byte(w >>> 24);
  };
  for (const p of parts) {
    if (typeof p === "number") {
      if (!Number.isSafeInteger(p) || p < 0)
        throw new Error(`deriveSeed: numeric parts must be non-negative safe integers, got ${p}`);
      byte(0x4e); // tag: number
      word(p >>> 0);
      word(Math.floor(p / 2 ** 32));
    } else {
      byte(0x53); // tag: string
      word(p.length);
      for (let i = 0; i < p.length; i++) {
        const c = p.charCodeAt(i);
        byte(c);
        byte(c >>> 8);
      }
    }
  }
  return fmix32(h);
}

/** Serialisable PRNG state. */
export interface PrngState {
  s: [number, number, number, number];
}

export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** `seed`: an integer in [0, 2^32 − 1]. */
  constructor(seed: number) {
    checkSeed(seed, "Prng");
    let x = seed >>> 0;
    const next = () => {
      x = (x + 0x9e3779b9) >>> 0;
      return fmix32(x);
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Next uniform 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform integer in [0, n), unbiased (rejects the top partial block of 2^32). */
  int(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 32)
      throw new Error(`Prng.int: n must be an integer in [1, 2^32], got ${n}`);
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const v = this.nextU32();
      if (v < limit) return v % n;
    }
  }

  /** Uniform integer in [lo, hi] inclusive. */
  intIn(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** In-place Fisher–Yates shuffle. */
  shuffle<T extends { length: number; [i: number]: unknown }>(a: T): T {
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  getState(): PrngState {
    return { s: [this.s0 >>> 0, this.s1 >>> 0, this.s2 >>> 0, this.s3 >>> 0] };
  }

  static fromState(st: PrngState): Prng {
    const r = new Prng(0);
    [r.s0, r.s1, r.s2, r.s3] = st.s.map((v) => v | 0) as [number, number, number, number];
    return r;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
