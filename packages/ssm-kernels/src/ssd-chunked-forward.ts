/*
 * Chunked SSD forward (Mamba-2 "state space duality"), exactly the recurrence of docs/model.md §3.5
 * regrouped into chunks of length L (the last one may be shorter). Per (batch, chunk, head),
 * with e_k = exp(dt_k·A_h), E_i = Π_{k≤i} e_k = exp(Λ_i) (Λ = in-chunk cumulative sum of dt·A):
 *   intra-chunk:     Y  = M · X,        M_ij = (C_i·B_j) · exp(Λ_i − Λ_j) · dt_j   (j ≤ i)
 *   state → output:  Y += diag(E) · C · S_prevᵀ
 *   chunk state:     S_end = E_{L−1} · S_prev + Xᵀ · diag(w) · B,   w_j = exp(Λ_{L−1} − Λ_j)·dt_j
 * The segment decays exp(Λ_i − Λ_j) = Π_{j<k≤i} e_k are built as running float64 products of
 * factors in (0, 1] (never a ratio of exponentials): stable, bounded by 1, and only L exps per
 * chunk and head. Internally the state is kept as Sᵀ [N,P] so that every block product is a
 * non-transposed gemm on strided views of x, y, B, C (leading dimensions H·P and G·N); small
 * operands are transposed into scratch.
 * Two parallel passes (parallelFor; serial without a thread pool): C·Bᵀ per (batch, chunk,
 * group), shared by the heads of the group; then the chunk recurrence per (batch, head).
 * When the native addon is enabled (@loop/ssm-kernels/node), `ssd/forward` (native/ssd.c) runs
 * both passes instead, same algorithm and same saved quantities, on OpenMP threads.
 * Shapes: see ssd-shape.ts.
 */
import {
  allocF32,
  allocF32Uninit,
  allocShared,
  defineKernel,
  gemm,
  kernelSet,
  optionalArg,
  parallelFor,
  shareable,
  transposeInto,
} from "@loop/tensor/kernel";
import { dskipForward } from "./mamba2-ops.js";
import { chunkDecays, swapLastAxes } from "./ssd-chunked-util.js";
import type { SsdArrays, SsdShape } from "./ssd-shape.js";

/** What the backward pass needs from the forward: chunk-start states and C·Bᵀ blocks. */
export interface SsdChunkedSaved {
  chunkSize: number;
  nChunks: number;
  /** Transposed state Sᵀ before each chunk, [B, H, nChunks, N, P]. */
  chunkStates: Float32Array;
  /** C·Bᵀ per chunk and group, [B, nChunks, G, L, L] (L = chunk size; lower triangle used). */
  cb: Float32Array;
}

/** Sizes shared by the forward and backward kernels. */
export interface ChunkDims {
  batch: number;
  T: number;
  H: number;
  P: number;
  G: number;
  N: number;
  Lc: number;
  nc: number;
}

interface CbArgs {
  [k: string]: unknown;
  d: ChunkDims;
  B: Float32Array;
  C: Float32Array;
  cb: Float32Array;
}

/** C·Bᵀ [L,L] for items (b, c, g) in [lo, hi). */
const cbKernel = defineKernel<CbArgs>("ssm/ssd-cb", import.meta.url, (a, lo, hi) => {
  const { T, G, N, Lc, nc } = a.d;
  const { B, C, cb } = a;
  const ldb = G * N;
  const Bt = new Float32Array(N * Lc);
  for (let item = lo; item < hi; item++) {
    const g = item % G;
    const c = Math.floor(item / G) % nc;
    const b = Math.floor(item / (G * nc));
    const t0 = c * Lc;
    const L = Math.min(Lc, T - t0);
    const bcOff = ((b * T + t0) * G + g) * N;
    transposeInto(B, bcOff, ldb, L, N, Bt, Lc);
    gemm(false, false, L, L, N, 1, C, bcOff, ldb, Bt, 0, Lc, 0, cb, item * Lc * Lc, Lc);
  }
});

interface FwdArgs {
  [k: string]: unknown;
  d: ChunkDims;
  x: Float32Array;
  dt: Float32Array;
  A: Float32Array;
  B: Float32Array;
  C: Float32Array;
  hasS0: boolean;
  /** [B·T] document starts (documentResets), or an empty array. */
  resets: Float32Array;
  y: Float32Array;
  /** Running Sᵀ [B,H,N,P]: initial state in, final state out. */
  st: Float32Array;
  cb: Float32Array;
  /** [B,H,nc,N,P] or an empty array when not saving. */
  chunkStates: Float32Array;
}

/** The chunk recurrence for items (b, h) in [lo, hi). */
const scanKernel = defineKernel<FwdArgs>("ssm/ssd-fwd", import.meta.url, (a, lo, hi) => {
  const { T, H, P, G, N, Lc, nc } = a.d;
  const { x, dt, A, B, C, y, st, cb, chunkStates } = a;
  const resets = a.resets.length > 0 ? a.resets : null;
  const PN = P * N;
  const hpg = H / G;
  const ldx = H * P;
  const ldb = G * N;
  const save = chunkStates.length > 0;
  const M = new Float32Array(Lc * Lc);
  const Wt = new Float32Array(N * Lc);
  const W = new Float32Array(Lc * N);
  const e = new Float64Array(Lc);
  const E = new Float64Array(Lc);
  const dec = new Float64Array(Lc);
  for (let item = lo; item < hi; item++) {
    const h = item % H;
    const b = Math.floor(item / H);
    const g = Math.floor(h / hpg);
    const sOff = item * PN;
    for (let c = 0; c < nc; c++) {
      const t0 = c * Lc;
      const L = Math.min(Lc, T - t0);
      // The state before the first chunk is exactly zero without an initial state.
      const zeroPrev = !a.hasS0 && c === 0;
      const bcOff = ((b * T + t0) * G + g) * N;
      const cbOff = ((b * nc + c) * G + g) * Lc * Lc;
      const dtOff = (b * T + t0) * H + h;
      chunkDecays(dt, dtOff, H, A[h]!, L, e, E, resets, b * T + t0);
      // Row i of the decay matrix: dec[j] = exp(Λ_i − Λ_j), updated from row i−1.
      for (let i = 0; i < L; i++) {
        const ei = e[i]!;
        const row = i * Lc;
        for (let j = 0; j < i; j++) {
          const d = dec[j]! * ei;
          dec[j] = d;
          M[row + j] = cb[cbOff + row + j]! * d * dt[dtOff + j * H]!;
        }
        dec[i] = 1;
        M[row + i] = cb[cbOff + row + i]! * dt[dtOff + i * H]!;
        M.fill(0, row + i + 1, row + L);
      }
      const xOff = ((b * T + t0) * H + h) * P;
      gemm(false, false, L, P, L, 1, M, 0, Lc, x, xOff, ldx, 0, y, xOff, ldx);
      if (save) chunkStates.set(st.subarray(sOff, sOff + PN), (item * nc + c) * PN);
      if (!zeroPrev) {
        for (let i = 0; i < L; i++) {
          const Ei = E[i]!;
          const src = bcOff + i * ldb;
          for (let n = 0; n < N; n++) W[i * N + n] = Ei * C[src + n]!;
        }
        gemm(false, false, L, P, N, 1, W, 0, N, st, sOff, P, 1, y, xOff, ldx);
      }
      // Sᵀ ← E_{L−1}·Sᵀ + (diag(w)·B)ᵀ·X, with (diag(w)·B)ᵀ written as Wt [N, L].
      let wdec = 1;
      for (let j = L - 1; j >= 0; j--) {
        const w = wdec * dt[dtOff + j * H]!;
        const src = bcOff + j * ldb;
        for (let n = 0; n < N; n++) Wt[n * Lc + j] = w * B[src + n]!;
        wdec *= e[j]!;
      }
      const EL = E[L - 1]!;
      for (let i = sOff; i < sOff + PN; i++) st[i]! *= EL;
      gemm(false, false, N, P, L, 1, Wt, 0, Lc, x, xOff, ldx, 1, st, sOff, P);
    }
  }
});

/** The sizes every native/ssd.c entry takes last, in this order (its `arg_dims`). */
export type SsdNativeSizes = [
  batch: number,
  T: number,
  H: number,
  P: number,
  G: number,
  N: number,
  Lc: number,
];

/** Those sizes of chunked dims `d`. */
export function nativeSizes(d: ChunkDims): SsdNativeSizes {
  return [d.batch, d.T, d.H, d.P, d.G, d.N, d.Lc];
}

/**
 * Native twin of both forward passes (native/ssd.c `forward`): writes y, the final state
 * [B,H,P,N], cb and (when given) chunkStates; s0 null means a zero initial state; D (when given)
 * adds the D skip to y chunk by chunk; the optional last argument is `SsdArrays.resets`.
 */
export type SsdForwardNative = (
  x: Float32Array,
  dt: Float32Array,
  A: Float32Array,
  B: Float32Array,
  C: Float32Array,
  s0: Float32Array | null,
  y: Float32Array,
  state: Float32Array,
  cb: Float32Array,
  chunkStates: Float32Array | null,
  D: Float32Array | null,
  ...sizesAndResets: [...SsdNativeSizes] | [...SsdNativeSizes, Float32Array]
) => void;

/** Chunk sizes for a sequence: a chunk longer than T computes the same with more scratch. */
export function chunkDims(s: SsdShape, chunkSize: number): ChunkDims {
  const Lc = Math.min(chunkSize, Math.max(s.seqLen, 1));
  return {
    batch: s.batch,
    T: s.seqLen,
    H: s.nHeads,
    P: s.headdim,
    G: s.nGroups,
    N: s.dState,
    Lc,
    nc: Math.ceil(s.seqLen / Lc),
  };
}

/**
 * Forward pass. With `save` it also keeps what the backward needs
 * (B·T·H·P·N/L + B·T·G·L floats).
 */
export function ssdChunkedForward(
  s: SsdShape,
  a: SsdArrays,
  chunkSize: number,
  save: boolean,
): { y: Float32Array; state: Float32Array; saved: SsdChunkedSaved | null } {
  const d = chunkDims(s, chunkSize);
  const { batch, H, P, G, N, Lc, nc } = d;
  const PN = P * N;
  const nat = kernelSet("ssd")?.forward;
  if (nat) {
    // written in full by the native pass (cb: the lower triangles, all anyone reads)
    const y = allocF32Uninit(batch * d.T * H * P);
    const cb = allocF32Uninit(batch * nc * G * Lc * Lc);
    const chunkStates = save ? allocF32Uninit(batch * H * nc * PN) : null;
    const state = allocF32Uninit(batch * H * PN);
    nat(
      a.x,
      a.dt,
      a.A,
      a.B,
      a.C,
      a.s0,
      y,
      state,
      cb,
      chunkStates,
      a.D ?? null,
      ...nativeSizes(d),
      ...optionalArg(a.resets ?? null),
    );
    const saved = chunkStates ? { chunkSize: Lc, nChunks: nc, chunkStates, cb } : null;
    return { y, state, saved };
  }
  const y = allocShared(batch * d.T * H * P);
  const st = allocShared(batch * H * PN);
  if (a.s0) swapLastAxes(a.s0, batch * H, P, N, st);
  const cb = allocShared(batch * nc * G * Lc * Lc);
  const chunkStates = save ? allocShared(batch * H * nc * PN) : new Float32Array(0);
  const B = shareable(a.B);
  const C = shareable(a.C);
  parallelFor(cbKernel, batch * nc * G, { d, B, C, cb });
  parallelFor(scanKernel, batch * H, {
    d,
    x: shareable(a.x),
    dt: shareable(a.dt),
    A: shareable(a.A),
    B,
    C,
    hasS0: a.s0 !== null,
    resets: a.resets ? shareable(a.resets) : allocShared(0),
    y,
    st,
    cb,
    chunkStates,
  });
  if (a.D) dskipForward(y, a.x, a.D, P);
  const state = allocF32(batch * H * PN);
  swapLastAxes(st, batch * H, N, P, state);
  const saved = save ? { chunkSize: Lc, nChunks: nc, chunkStates, cb } : null;
  return { y, state, saved };
}
