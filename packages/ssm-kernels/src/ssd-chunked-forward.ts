/**
 * Chunked SSD forward (Mamba-2 "state space duality"), exactly the recurrence of model.md §3.5
 * regrouped into chunks of length L (the last one may be shorter). Per (batch, chunk, head),
 * with a_i = dt_i·A_h and the in-chunk cumulative sum Λ_i = Σ_{k≤i} a_k (float64):
 *   intra-chunk:     Y  = M · X,          M_ij = (C_i·B_j) · exp(Λ_i − Λ_j) · dt_j   (j ≤ i)
 *   state → output:  Y += diag(e^{Λ}) · C · S_prevᵀ
 *   chunk state:     S_end = e^{Λ_{L−1}} · S_prev + Xᵀ · diag(w) · B,  w_j = exp(Λ_{L−1} − Λ_j)·dt_j
 * Segment sums exp(Λ_i − Λ_j) are taken as the exponential of a float64 difference (never a
 * ratio of exponentials), so they stay exact and bounded by 1. C·Bᵀ is shared by the heads of a
 * group. X, Y are strided [L,P] views of x/y (leading dimension H·P), B and C [L,N] views
 * (leading dimension G·N), so no copies are made. Shapes: see ssd-shape.ts.
 */
import { allocF32, gemm } from "@loop/tensor";
import type { SsdArrays, SsdShape } from "./ssd-shape.js";

/** What the backward pass needs from the forward: chunk-start states and C·Bᵀ blocks. */
export interface SsdChunkedSaved {
  chunkSize: number;
  nChunks: number;
  /** State before each chunk, [B, nChunks, H, P, N]. */
  chunkStates: Float32Array;
  /** C·Bᵀ per chunk and group, [B, nChunks, G, L, L] (L = chunk size). */
  cb: Float32Array;
}

/** Λ_i = Σ_{k≤i} dt_k·A over one chunk (float64), written to `acum`. */
export function chunkCumsum(
  dt: Float32Array,
  dtOff: number,
  dtStride: number,
  Ah: number,
  L: number,
  acum: Float64Array,
): void {
  let c = 0;
  for (let i = 0; i < L; i++) {
    c += dt[dtOff + i * dtStride]! * Ah;
    acum[i] = c;
  }
}

/**
 * Forward pass. With `save` it also returns the chunk-start states and C·Bᵀ blocks the backward
 * needs (B·T·H·P·N/L + B·T·G·L floats).
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
  const state = allocF32(batch * H * PN);
  if (a.s0) state.set(a.s0);
  const chunkStates = save ? new Float32Array(batch * nc * H * PN) : null;
  const cbAll = save ? new Float32Array(batch * nc * G * Lc * Lc) : null;
  const cbTmp = save ? null : new Float32Array(Lc * Lc);
  const M = new Float32Array(Lc * Lc);
  const W = new Float32Array(Lc * N);
  const acum = new Float64Array(Lc);
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
        gemm(false, true, L, L, N, 1, a.C, bcOff, ldb, a.B, bcOff, ldb, 0, cb, cbOff, Lc);
        for (let hh = 0; hh < hpg; hh++) {
          const h = g * hpg + hh;
          const dtOff = (b * T + t0) * H + h;
          chunkCumsum(a.dt, dtOff, H, a.A[h]!, L, acum);
          for (let i = 0; i < L; i++) {
            const ai = acum[i]!;
            const row = i * Lc;
            for (let j = 0; j <= i; j++) {
              M[row + j] = cb[cbOff + row + j]! * Math.exp(ai - acum[j]!) * a.dt[dtOff + j * H]!;
            }
            M.fill(0, row + i + 1, row + L);
          }
          const xOff = ((b * T + t0) * H + h) * P;
          gemm(false, false, L, P, L, 1, M, 0, Lc, a.x, xOff, ldx, 0, y, xOff, ldx);
          const sOff = (b * H + h) * PN;
          if (chunkStates) {
            chunkStates.set(state.subarray(sOff, sOff + PN), ((b * nc + c) * H + h) * PN);
          }
          if (!zeroPrev) {
            for (let i = 0; i < L; i++) {
              const e = Math.exp(acum[i]!);
              const src = bcOff + i * ldb;
              for (let n = 0; n < N; n++) W[i * N + n] = e * a.C[src + n]!;
            }
            gemm(false, true, L, P, N, 1, W, 0, N, state, sOff, N, 1, y, xOff, ldx);
          }
          const aL = acum[L - 1]!;
          for (let j = 0; j < L; j++) {
            const w = Math.exp(aL - acum[j]!) * a.dt[dtOff + j * H]!;
            const src = bcOff + j * ldb;
            for (let n = 0; n < N; n++) W[j * N + n] = w * a.B[src + n]!;
          }
          const eL = Math.exp(aL);
          for (let i = sOff; i < sOff + PN; i++) state[i]! *= eL;
          gemm(true, false, P, N, L, 1, a.x, xOff, ldx, W, 0, N, 1, state, sOff, N);
        }
      }
    }
  }
  const saved =
    chunkStates && cbAll ? { chunkSize: Lc, nChunks: nc, chunkStates, cb: cbAll } : null;
  return { y, state, saved };
}
