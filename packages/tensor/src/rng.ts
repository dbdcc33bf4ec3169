/*
 * Seeded, portable random numbers: xoshiro128** 1.1 (Blackman & Vigna, 2018) on 32-bit integer
 * maths, seeded through splitmix32, so every platform produces the same stream for the same seed.
 * One generator serves the whole project: weight initialisation, dropout-free training order,
 * sampling, and every synthetic task's examples.
 * - `child(name)` derives an independent stream from the parent's seed and a name (FNV-1a hash),
 *   without consuming the parent's stream: adding a new consumer never shifts the others.
 * - `deriveSeed(seed, ...parts)` folds numbers and strings into a new 32-bit seed (FNV-1a over
 *   the parts' bytes, then `fmix32`), giving independent streams such as "example i of seed s".
 */

/** MurmurHash3's 32-bit finaliser: splitmix32's output function and `deriveSeed`'s last step. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  return fmix32(state.s);
}

function fnv1a(str: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A 32-bit seed derived from `seed` (an integer in [0, 2^32 − 1]) and a list of parts
 * (non-negative integers or strings). */
export function deriveSeed(seed: number, ...parts: (number | string)[]): number {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`deriveSeed: seed must be an integer in [0, 2^32 - 1], got ${seed}`);
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

/** An `Rng`'s full state, plain JSON, to resume its stream exactly. */
export interface RngState {
  seed: number;
  s: [number, number, number, number];
  spare: number | null;
}

/**
 * The one seeded random generator (xoshiro128**): uniform, integer and normal draws, named child
 * streams, serialisable state.
 */
export class Rng {
  /** The seed this generator started from. */
  readonly seed: number;
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  private spare: number | null = null;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new Error(`Rng: seed must be a finite number, got ${seed}`);
    this.seed = seed >>> 0;
    const st = { s: this.seed ^ Math.floor(seed / 2 ** 32) };
    this.s0 = splitmix32(st);
    this.s1 = splitmix32(st);
    this.s2 = splitmix32(st);
    this.s3 = splitmix32(st);
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** An independent stream named `name`, a pure function of (this seed, name). */
  child(name: string): Rng {
    return new Rng((Math.imul(this.seed ^ 0x5bd1e995, 0x27d4eb2d) ^ fnv1a(name)) >>> 0);
  }

  /** Next 32-bit unsigned integer. */
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

  /** Uniform in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform in [a, b). */
  uniformIn(a: number, b: number): number {
    return a + (b - a) * this.uniform();
  }

  /** Uniform integer in [0, n), unbiased (rejection sampling). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0 || n > 2 ** 32)
      throw new Error(`Rng.int: n must be an integer in [1, 2^32], got ${n}`);
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

  /** Standard normal (Box–Muller, the second value cached). */
  normal(mean = 0, std = 1): number {
    if (this.spare !== null) {
      const v = this.spare;
      this.spare = null;
      return mean + std * v;
    }
    let u = 0;
    while (u === 0) u = this.uniform();
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return mean + std * r * Math.cos(2 * Math.PI * v);
  }

  /** Fill with N(mean, std²). */
  fillNormal(a: Float32Array, mean = 0, std = 1): Float32Array {
    for (let i = 0; i < a.length; i++) a[i] = this.normal(mean, std);
    return a;
  }

  /** Fill with U[lo, hi). */
  fillUniform(a: Float32Array, lo: number, hi: number): Float32Array {
    for (let i = 0; i < a.length; i++) a[i] = this.uniformIn(lo, hi);
    return a;
  }

  /** In-place Fisher–Yates shuffle (an array or a typed array). */
  shuffle<A extends { length: number; [i: number]: unknown }>(a: A): A {
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  /** Serialisable state (for checkpoints and exact resume). */
  getState(): RngState {
    return { seed: this.seed, s: [this.s0, this.s1, this.s2, this.s3], spare: this.spare };
  }

  /** Restore a state saved by `getState`: the stream continues exactly from there. */
  setState(st: RngState): void {
    [this.s0, this.s1, this.s2, this.s3] = st.s.map((v) => v | 0) as [
      number,
      number,
      number,
      number,
    ];
    this.spare = st.spare;
  }

  /** A generator continuing from a state saved by `getState`. */
  static fromState(st: RngState): Rng {
    const r = new Rng(st.seed);
    r.setState(st);
    return r;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
