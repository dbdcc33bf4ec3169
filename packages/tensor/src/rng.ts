/**
 * Seeded, portable random numbers: xoshiro128** (Blackman & Vigna) on 32-bit integer maths,
 * seeded through splitmix32, so every platform produces the same stream for the same seed.
 * `child(name)` derives an independent stream from the parent's seed and a name (FNV-1a hash),
 * without consuming the parent's stream: adding a new consumer never shifts the others.
 */
function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

function fnv1a(str: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export interface RngState {
  seed: number;
  s: [number, number, number, number];
  spare: number | null;
}

export class Rng {
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

  /** In-place Fisher–Yates shuffle. */
  shuffle<T>(a: T[]): T[] {
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = a[i]!;
      a[i] = a[j]!;
      a[j] = t;
    }
    return a;
  }

  /** Serialisable state (for checkpoints and exact resume). */
  getState(): RngState {
    return { seed: this.seed, s: [this.s0, this.s1, this.s2, this.s3], spare: this.spare };
  }

  setState(st: RngState): void {
    [this.s0, this.s1, this.s2, this.s3] = st.s.map((v) => v | 0) as [
      number,
      number,
      number,
      number,
    ];
    this.spare = st.spare;
  }

  static fromState(st: RngState): Rng {
    const r = new Rng(st.seed);
    r.setState(st);
    return r;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
