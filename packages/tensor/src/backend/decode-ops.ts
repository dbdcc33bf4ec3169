/*
 * What a backend provides for decoding with the state on its own memory (docs/model.md §1, §3,
 * §4): the two recurrent kernels a token needs beyond the model's ops — the Mamba-2 mixer's
 * one-token state update and attention over a KV cache — on states the backend holds. The
 * decoders (@loop/looped `deviceDecodeStep`, `generateOn`) compose them with the model's ops once
 * for every backend; a backend implements the two kernels, nothing of the decoding.
 *
 * Rows: a decoding state holds S sequences; a call's inputs are B rows that go to state rows
 * `rows` (an int tensor [B] of distinct rows; absent: 0..B−1, B = S), so early exit can step the
 * rows still running and give the exited ones their entries.
 */

/** The sizes a Mamba-2 decode step reads (a Mamba-2 mixer config fits). */
export interface Mamba2StepSizes {
  dState: number;
  headdim: number;
  nGroups: number;
  dConv: number;
  /** dt clamped to [lo, hi] after its softplus; absent: no limit. */
  dtLimit?: readonly [number, number];
}

/** A Mamba-2 mixer's decoding state: conv [S, C, K−1] (oldest first) and ssm [S, H, P, N]. */
export interface Mamba2DecodeState<T> {
  conv: T;
  ssm: T;
}

/** The Mamba-2 weights a decode step reads besides the projections (§6 names in brackets). */
export interface Mamba2StepWeights<T> {
  /** [C, 1, K] (conv1d.weight). */
  convWeight: T;
  /** [C] (conv1d.bias). */
  convBias: T;
  /** [H] (dt_bias). */
  dtBias: T;
  /** [H] (A_log). */
  aLog: T;
  /** [H] (D). */
  d: T;
}

/** An attention layer's decoding state: rotated keys and values [S, Hkv, capacity, hd]. */
export interface KvCacheState<T> {
  k: T;
  v: T;
}

/** Which state rows a decode call's input rows go to. */
export interface DecodeRows<I> {
  /** Int tensor [B] of distinct state rows (absent: rows 0..B−1 of a state of B rows). */
  rows?: I | null;
}

/** The decode kernels of a backend (see the file comment). */
export interface DecodeOps<T, I> {
  /**
   * One token per row through a Mamba-2 mixer's recurrent step: zx [B, E] (the in_proj output,
   * z | xBC | dt) → y (with the D skip) and z, both [B, Di]; the state rows advance in place:
   *   conv: out = bias + Σ_k w[·,k]·(state ++ xBC)[k], the state shifts and takes xBC, x = silu(out);
   *   dt = clamp(softplus(dt + dt_bias)), S ← exp(dt·A)·S + dt·x ⊗ B, y = S·C + D·x.
   * With `absorb`, the state update alone (early exit's skipped steps): null.
   */
  mamba2Step(
    sizes: Mamba2StepSizes,
    zx: T,
    state: Mamba2DecodeState<T>,
    w: Mamba2StepWeights<T>,
    opts?: DecodeRows<I> & { absorb?: boolean },
  ): { y: T; z: T } | null;
  /**
   * One token per row at `position` through attention over the cache: q [B, Hq, hd], k, v
   * [B, Hkv, hd] as projected (RoPE with base `theta` at `position` is applied here); k and v are
   * written at `position` of the state rows, and q attends (causal GQA, scale 1/√hd) over
   * positions 0..position of its row: [B, Hq, hd]. With q null, the write alone (an exited
   * token's entry): null.
   */
  attendStep(
    cache: KvCacheState<T>,
    q: T | null,
    k: T,
    v: T,
    position: number,
    opts: DecodeRows<I> & { theta: number },
  ): T | null;
}
