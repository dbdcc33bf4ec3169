/**
 * Chunked SSD forward (Mamba-2 "state space duality"), exactly the recurrence of model.md §3.5
 * regrouped into chunks of length L (the last one may be shorter). Per (batch, chunk, head),
 * with e_k = exp(dt_k·A_h), E_i = Π_{k≤i} e_k = exp(Λ_i) (Λ = in-chunk cumulative sum of dt·A):
 *   intra-chunk:     Y  = M · X,        M_ij = (C_i·B_j) · exp(Λ_i − Λ_j) · dt_j   (j ≤ i)
 *   state → output:  Y += diag(E) · C · S_prevᵀ
 *   chunk state:     S_end = E_{L−1} · S_prev + Xᵀ · diag(w) · B,   w_j = exp(Λ_{L−1} − Λ_j)·dt_j
 * The segment decays exp(Λ_i − Λ_j) = Π_{j<k≤i} e_k are built as running float64 products of
 * factors in (0, 1] (never a ratio of exponentials): stable, bounded by 1, and only L exps per
 * chunk and head. C·Bᵀ is shared by the heads of a group. Internally the state is kept as
 * Sᵀ [N,P] so that every block product is a non-transposed gemm on strided views of x, y, B, C
 * (leading dimensions H·P and G·N); small operands are transposed into scratch.
 * Shapes: see ssd-shape.ts.
 */
import { allocF32, gemm } from "@loop/tensor";
import { chunkDecays, swapLastAxes, transposeInto } from "./ssd-chunked-util.js";
import type { SsdArrays, SsdShape } from "./ssd-shape.js";

/** What the backward pass needs from the forward: chunk-start states and C·Bᵀ blocks. */
export interface SsdChunkedSaved {
  chunkSize: number;
  nChunks: number;
  /** Transposed state Sᵀ before each chunk, [B, nChunks, H, N, P]. */
  chunkStates: Float32Array;
  /** C·Bᵀ per chunk and group, [B, nChunks, G, L, L] (L = chunk size; lower triangle used). */
  cb: Float32Array;
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
  const { batch, seqLen: T, nHeads: H, headdim: P, nGroups: G, dState: N } = s;
  const Lc = chunkSize;
  const PN = P * N;
  const hpg = H / G;
  const nc = Math.ceil(T / Lc);
  const ldx = H * P;
  const ldb = G * N;
  const y = allocF32(batch * T * H * P);
  // Sᵀ [B, H, N, P]
  const st = new Float32Array(batch * H * PN);
  if (a.s0) swapLastAxes(a.s0, batch * H, P, N, st);
  const chunkStates = save ? new Float32Array(batch * nc * H * PN) : null;
  const cbAll = save ? new Float32Array(batch * nc * G * Lc * Lc) : null;
  const cbTmp = save ? null : new Float32Array(Lc * Lc);
  const M = new Float32Array(Lc * Lc);
  const Bt = new Float32Array(N * Lc);
  const W = new Float32Array(Lc * N);
  const e = new Float64Array(Lc);
  const E = new Float64Array(Lc);
  const dec = new Float64Array(Lc);
  for (let b = 0; b < batch; b++) {
    for (let c = 0; c < nc; c++) {
      const t0 = c * Lc;
      const L = Math.min(Lc, T - t0);
      // The state before the first chunk is exactly zero without an initial state.
      const zeroPrev = a.s0 === null && c === 0;
      for (let g = 0; g < G; g++) {
        const bcOff = ((b * T + t0) * G + g) * N;
        const cb = cbAll ?? cbTmp!;
        const cbOff = cbAll ? ((b * nc + c) * G + g) * Lc * Lc : 0;
        transposeInto(a.B, bcOff, ldb, L, N, Bt, Lc);
        gemm(false, false, L, L, N, 1, a.C, bcOff, ldb, Bt, 0, Lc, 0, cb, cbOff, Lc);
        for (let hh = 0; hh < hpg; hh++) {
          const h = g * hpg + hh;
          const dtOff = (b * T + t0) * H + h;
          chunkDecays(a.dt, dtOff, H, a.A[h]!, L, e, E);
          // Row i of the decay matrix: dec[j] = exp(Λ_i − Λ_j), updated from row i−1.
          for (let i = 0; i < L; i++) {
            const ei = e[i]!;
            const row = i * Lc;
            for (let j = 0; j < i; j++) {
              const d = dec[j]! * ei;
              dec[j] = d;
              M[row + j] = cb[cbOff + row + j]! * d * a.dt[dtOff + j * H]!;
            }
            dec[i] = 1;
            M[row + i] = cb[cbOff + row + i]! * a.dt[dtOff + i * H]!;
            M.fill(0, row + i + 1, row + L);
          }
          const xOff = ((b * T + t0) * H + h) * P;
          gemm(false, false, L, P, L, 1, M, 0, Lc, a.x, xOff, ldx, 0, y, xOff, ldx);
          const sOff = (b * H + h) * PN;
          if (chunkStates)
            chunkStates.set(st.subarray(sOff, sOff + PN), ((b * nc + c) * H + h) * PN);
          if (!zeroPrev) {
            for (let i = 0; i < L; i++) {
              const Ei = E[i]!;
              const src = bcOff + i * ldb;
              for (let n = 0; n < N; n++) W[i * N + n] = Ei * a.C[src + n]!;
            }
            gemm(false, false, L, P, N, 1, W, 0, N, st, sOff, P, 1, y, xOff, ldx);
          }
          // Sᵀ ← E_{L−1}·Sᵀ + (diag(w)·B)ᵀ·X, with (diag(w)·B)ᵀ written into Bt [N, L] (Bᵀ is
          // only needed for C·Bᵀ above).
          let wdec = 1;
          for (let j = L - 1; j >= 0; j--) {
            const w = wdec * a.dt[dtOff + j * H]!;
            const src = bcOff + j * ldb;
            for (let n = 0; n < N; n++) Bt[n * Lc + j] = w * a.B[src + n]!;
            wdec *= e[j]!;
          }
          const EL = E[L - 1]!;
          for (let i = sOff; i < sOff + PN; i++) st[i]! *= EL;
          gemm(false, false, N, P, L, 1, Bt, 0, Lc, a.x, xOff, ldx, 1, st, sOff, P);
        }
      }
    }
  }
  const state = allocF32(batch * H * PN);
  swapLastAxes(st, batch * H, N, P, state);
  const saved =
    chunkStates && cbAll ? { chunkSize: Lc, nChunks: nc, chunkStates, cb: cbAll } : null;
  return { y, state, saved };
}
