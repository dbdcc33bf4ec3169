/**
 * Hand-written backward of the chunked SSD forward (ssd-chunked-forward.ts). Chunks are visited
 * last to first carrying R = ∂L/∂S_end of the current chunk (the final-state gradient to start).
 * Per (batch, chunk, head), with Y = M·X + diag(e^{Λ})·C·S_prevᵀ and
 * S_end = e^{Λ_{L−1}}·S_prev + Xᵀ·diag(w)·B:
 *   dM = gY·Xᵀ (lower triangle)      dX  = Mᵀ·gY + diag(w)·B·Rᵀ
 *   d(C·Bᵀ)_ij = dM_ij·e^{Λ_i−Λ_j}·dt_j  → dC += d(CBᵀ)·B, dB += d(CBᵀ)ᵀ·C   (summed over the group)
 *   gŶ = diag(e^{Λ})·gY:  dC += gŶ·S_prev,  R_prev = e^{Λ_{L−1}}·R + gŶᵀ·C
 *   dB += diag(w)·X·R
 *   dt and A enter through M, w and the decays, i.e. through Λ: every term f·e^{Λ_i−Λ_j}
 *   contributes ∂f to Λ_i and −∂f to Λ_j; then ∂a_k = Σ_{i≥k} ∂Λ_i, ∂dt_k += ∂a_k·A, ∂A += Σ ∂a_k·dt_k.
 * Scratch is allocated once per call; the inner work is gemm on strided views plus O(L²) loops.
 */
import { gemm } from "@loop/tensor";
import { chunkCumsum, type SsdChunkedSaved } from "./ssd-chunked-forward.js";
import type { SsdArrays, SsdGrads, SsdShape } from "./ssd-shape.js";

export function ssdChunkedBackward(
  s: SsdShape,
  a: SsdArrays,
  saved: SsdChunkedSaved,
  gyIn: Float32Array | null,
  gState: Float32Array | null,
): SsdGrads {
  const { batch, seqLen: T, nHeads: H, headdim: P, nGroups: G, dState: N } = s;
  const { chunkSize: Lc, nChunks: nc, chunkStates, cb } = saved;
  const PN = P * N;
  const hpg = H / G;
  const ldx = H * P;
  const ldb = G * N;
  const gx = new Float32Array(a.x.length);
  const gdt = new Float32Array(a.dt.length);
  const gA = new Float32Array(H);
  const gB = new Float32Array(a.B.length);
  const gC = new Float32Array(a.C.length);
  const gs0 = a.s0 ? new Float32Array(a.s0.length) : null;
  const gy = gyIn ?? new Float32Array(a.x.length);
  const hasGy = gyIn !== null;
  // R for every head of the current batch entry.
  const gS = new Float32Array(H * PN);
  const M = new Float32Array(Lc * Lc);
  const dM = new Float32Array(Lc * Lc);
  const dCB = new Float32Array(Lc * Lc);
  const gYs = new Float32Array(Lc * P);
  const tmpLP = new Float32Array(Lc * P);
  const acum = new Float64Array(Lc);
  const eA = new Float64Array(Lc);
  const dAc = new Float64Array(Lc);
  const ddt = new Float64Array(Lc);
  const gAacc = new Float64Array(H);
  for (let b = 0; b < batch; b++) {
    if (gState) gS.set(gState.subarray(b * H * PN, (b + 1) * H * PN));
    else gS.fill(0);
    // True while R is still exactly zero (no final-state gradient, nothing propagated yet).
    let zeroR = gState === null;
    for (let c = nc - 1; c >= 0; c--) {
      const t0 = c * Lc;
      const L = Math.min(Lc, T - t0);
      const zeroPrev = a.s0 === null && c === 0;
      for (let g = 0; g < G; g++) {
        const bcOff = ((b * T + t0) * G + g) * N;
        const cbOff = ((b * nc + c) * G + g) * Lc * Lc;
        dCB.fill(0);
        for (let hh = 0; hh < hpg; hh++) {
          const h = g * hpg + hh;
          const Ah = a.A[h]!;
          const dtOff = (b * T + t0) * H + h;
          const xOff = ((b * T + t0) * H + h) * P;
          const sPrev = ((b * nc + c) * H + h) * PN;
          const rOff = h * PN;
          chunkCumsum(a.dt, dtOff, H, Ah, L, acum);
          for (let i = 0; i < L; i++) eA[i] = Math.exp(acum[i]!);
          dAc.fill(0);
          ddt.fill(0);
          // Intra-chunk block: rebuild M, then dM = gY·Xᵀ and dX = Mᵀ·gY.
          if (hasGy) {
            gemm(false, true, L, L, P, 1, gy, xOff, ldx, a.x, xOff, ldx, 0, dM, 0, Lc);
            for (let i = 0; i < L; i++) {
              const ai = acum[i]!;
              const row = i * Lc;
              let dAi = 0;
              for (let j = 0; j <= i; j++) {
                const lij = Math.exp(ai - acum[j]!);
                const dtj = a.dt[dtOff + j * H]!;
                const cbij = cb[cbOff + row + j]!;
                const m = cbij * lij * dtj;
                M[row + j] = m;
                const dm = dM[row + j]!;
                dCB[row + j]! += dm * lij * dtj;
                ddt[j]! += dm * cbij * lij;
                const dseg = dm * m;
                dAi += dseg;
                dAc[j]! -= dseg;
              }
              dAc[i]! += dAi;
              M.fill(0, row + i + 1, row + L);
            }
            gemm(true, false, L, P, L, 1, M, 0, Lc, gy, xOff, ldx, 0, gx, xOff, ldx);
            // State → output: gŶ = diag(e^Λ)·gY.
            for (let i = 0; i < L; i++) {
              const e = eA[i]!;
              const src = xOff + i * ldx;
              for (let p = 0; p < P; p++) gYs[i * P + p] = e * gy[src + p]!;
            }
            if (!zeroPrev) {
              // dΛ_i += gŶ_i · (S_prev·C_i);  dC += gŶ·S_prev.
              gemm(false, true, L, P, N, 1, a.C, bcOff, ldb, chunkStates, sPrev, N, 0, tmpLP, 0, P);
              for (let i = 0; i < L; i++) {
                let d = 0;
                for (let p = 0; p < P; p++) d += gYs[i * P + p]! * tmpLP[i * P + p]!;
                dAc[i]! += d;
              }
              gemm(false, false, L, N, P, 1, gYs, 0, P, chunkStates, sPrev, N, 1, gC, bcOff, ldb);
            }
          }
          // Chunk-state path, through R = ∂L/∂S_end.
          const aL = acum[L - 1]!;
          const eL = eA[L - 1]!;
          if (!zeroR) {
            // RB = B·Rᵀ [L,P]: dX_j += w_j·RB_j, ∂w_j = x_j·RB_j; dB += diag(w)·X·R.
            gemm(false, true, L, P, N, 1, a.B, bcOff, ldb, gS, rOff, N, 0, tmpLP, 0, P);
            let dAL = 0;
            for (let j = 0; j < L; j++) {
              const wdec = Math.exp(aL - acum[j]!);
              const w = wdec * a.dt[dtOff + j * H]!;
              const xr = xOff + j * ldx;
              let dw = 0;
              for (let p = 0; p < P; p++) {
                const rb = tmpLP[j * P + p]!;
                const xv = a.x[xr + p]!;
                dw += xv * rb;
                gx[xr + p]! += w * rb;
                tmpLP[j * P + p] = w * xv;
              }
              ddt[j]! += dw * wdec;
              const dseg = dw * w;
              dAL += dseg;
              dAc[j]! -= dseg;
            }
            gemm(false, false, L, N, P, 1, tmpLP, 0, P, gS, rOff, N, 1, gB, bcOff, ldb);
            if (!zeroPrev) {
              let dot = 0;
              for (let i = 0; i < PN; i++) dot += gS[rOff + i]! * chunkStates[sPrev + i]!;
              dAL += eL * dot;
            }
            dAc[L - 1]! += dAL;
          }
          // R_prev = e^{Λ_{L−1}}·R + gŶᵀ·C (not needed before the first chunk without s0).
          if (!zeroPrev || gs0) {
            for (let i = rOff; i < rOff + PN; i++) gS[i]! *= eL;
            if (hasGy) gemm(true, false, P, N, L, 1, gYs, 0, P, a.C, bcOff, ldb, 1, gS, rOff, N);
          }
          // Λ → a → (dt, A).
          let da = 0;
          let gAh = 0;
          for (let k = L - 1; k >= 0; k--) {
            da += dAc[k]!;
            const dtk = a.dt[dtOff + k * H]!;
            gdt[dtOff + k * H] = ddt[k]! + da * Ah;
            gAh += da * dtk;
          }
          gAacc[h]! += gAh;
        }
        if (hasGy) {
          gemm(false, false, L, N, L, 1, dCB, 0, Lc, a.B, bcOff, ldb, 1, gC, bcOff, ldb);
          gemm(true, false, L, N, L, 1, dCB, 0, Lc, a.C, bcOff, ldb, 1, gB, bcOff, ldb);
        }
      }
      if (hasGy) zeroR = false;
    }
    if (gs0) gs0.set(gS, b * H * PN);
  }
  for (let h = 0; h < H; h++) gA[h] = gAacc[h]!;
  return { x: gx, dt: gdt, A: gA, B: gB, C: gC, s0: gs0 };
}
