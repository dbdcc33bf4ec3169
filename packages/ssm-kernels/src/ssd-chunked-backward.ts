/**
 * Hand-written backward of the chunked SSD forward (ssd-chunked-forward.ts). Chunks are visited
 * last to first carrying R = ∂L/∂S_end of the current chunk (the final-state gradient to start),
 * kept transposed (Rᵀ [N,P]) like the state. Per (batch, chunk, head), with
 * Y = M·X + diag(E)·C·S_prevᵀ and S_end = E_{L−1}·S_prev + Xᵀ·diag(w)·B:
 *   dM = gY·Xᵀ (lower triangle)      dX  = Mᵀ·gY + diag(w)·B·Rᵀ
 *   d(C·Bᵀ)_ij = dM_ij·exp(Λ_i−Λ_j)·dt_j  → dC += d(CBᵀ)·B, dB += d(CBᵀ)ᵀ·C   (summed over the group)
 *   gŶ = diag(E)·gY:  dC += gŶ·S_prev,  R_prev = E_{L−1}·R + gŶᵀ·C
 *   dB += diag(w)·X·R
 *   dt and A enter through M, w and the decays, i.e. through Λ: every term f·exp(Λ_i − Λ_j)
 *   contributes ∂f to Λ_i and −∂f to Λ_j (float64); then ∂a_k = Σ_{i≥k} ∂Λ_i with a_k = dt_k·A,
 *   so ∂dt_k += ∂a_k·A and ∂A += Σ ∂a_k·dt_k.
 * Every block product is a non-transposed gemm; scratch is allocated once per call.
 */
import { gemm } from "@loop/tensor";
import type { SsdChunkedSaved } from "./ssd-chunked-forward.js";
import { chunkDecays, swapLastAxes, transposeInto } from "./ssd-chunked-util.js";
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
  // Rᵀ [H, N, P] for the current batch entry.
  const rt = new Float32Array(H * PN);
  const gStateT = gState ? new Float32Array(gState.length) : null;
  if (gState && gStateT) swapLastAxes(gState, batch * H, P, N, gStateT);
  const gs0T = gs0 ? new Float32Array(gs0.length) : null;
  const M = new Float32Array(Lc * Lc);
  const dM = new Float32Array(Lc * Lc);
  const dCB = new Float32Array(Lc * Lc);
  const Xt = new Float32Array(P * Lc);
  const Ct = new Float32Array(N * Lc);
  const Spn = new Float32Array(PN);
  const gYs = new Float32Array(Lc * P);
  const tmpLP = new Float32Array(Lc * P);
  const e = new Float64Array(Lc);
  const E = new Float64Array(Lc);
  const dec = new Float64Array(Lc);
  const dAc = new Float64Array(Lc);
  const ddt = new Float64Array(Lc);
  const gAacc = new Float64Array(H);
  for (let b = 0; b < batch; b++) {
    if (gStateT) rt.set(gStateT.subarray(b * H * PN, (b + 1) * H * PN));
    else rt.fill(0);
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
        if (hasGy) transposeInto(a.C, bcOff, ldb, L, N, Ct, Lc);
        for (let hh = 0; hh < hpg; hh++) {
          const h = g * hpg + hh;
          const Ah = a.A[h]!;
          const dtOff = (b * T + t0) * H + h;
          const xOff = ((b * T + t0) * H + h) * P;
          const sPrev = ((b * nc + c) * H + h) * PN;
          const rOff = h * PN;
          chunkDecays(a.dt, dtOff, H, Ah, L, e, E);
          dAc.fill(0);
          ddt.fill(0);
          if (hasGy) {
            // Intra-chunk block: dM = gY·Xᵀ; rebuild M as Mᵀ (stored in M) for dX = Mᵀ·gY.
            transposeInto(a.x, xOff, ldx, L, P, Xt, Lc);
            gemm(false, false, L, L, P, 1, gy, xOff, ldx, Xt, 0, Lc, 0, dM, 0, Lc);
            for (let i = 0; i < L; i++) {
              const ei = e[i]!;
              const row = i * Lc;
              let dAi = 0;
              for (let j = 0; j <= i; j++) {
                const lij = j < i ? dec[j]! * ei : 1;
                dec[j] = lij;
                const dtj = a.dt[dtOff + j * H]!;
                const cbij = cb[cbOff + row + j]!;
                const m = cbij * lij * dtj;
                M[j * Lc + i] = m;
                const dm = dM[row + j]!;
                dCB[row + j]! += dm * lij * dtj;
                ddt[j]! += dm * cbij * lij;
                const dseg = dm * m;
                dAi += dseg;
                dAc[j]! -= dseg;
              }
              dAc[i]! += dAi;
            }
            for (let j = 0; j < L; j++) M.fill(0, j * Lc, j * Lc + j);
            gemm(false, false, L, P, L, 1, M, 0, Lc, gy, xOff, ldx, 0, gx, xOff, ldx);
            // State → output: gŶ = diag(E)·gY.
            for (let i = 0; i < L; i++) {
              const Ei = E[i]!;
              const src = xOff + i * ldx;
              for (let p = 0; p < P; p++) gYs[i * P + p] = Ei * gy[src + p]!;
            }
            if (!zeroPrev) {
              // ∂Λ_i += gŶ_i · (S_prev·C_i);  dC += gŶ·S_prev.
              gemm(
                false,
                false,
                L,
                P,
                N,
                1,
                a.C,
                bcOff,
                ldb,
                chunkStates,
                sPrev,
                P,
                0,
                tmpLP,
                0,
                P,
              );
              for (let i = 0; i < L; i++) {
                let d = 0;
                for (let p = 0; p < P; p++) d += gYs[i * P + p]! * tmpLP[i * P + p]!;
                dAc[i]! += d;
              }
              transposeInto(chunkStates, sPrev, P, N, P, Spn, N);
              gemm(false, false, L, N, P, 1, gYs, 0, P, Spn, 0, N, 1, gC, bcOff, ldb);
            }
          }
          // Chunk-state path, through R = ∂L/∂S_end.
          const EL = E[L - 1]!;
          if (!zeroR) {
            // RB = B·Rᵀ [L,P]: dX_j += w_j·RB_j, ∂w_j = x_j·RB_j; then dB += diag(w)·X·R.
            gemm(false, false, L, P, N, 1, a.B, bcOff, ldb, rt, rOff, P, 0, tmpLP, 0, P);
            let dAL = 0;
            let wdec = 1;
            for (let j = L - 1; j >= 0; j--) {
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
              wdec *= e[j]!;
            }
            transposeInto(rt, rOff, P, N, P, Spn, N);
            gemm(false, false, L, N, P, 1, tmpLP, 0, P, Spn, 0, N, 1, gB, bcOff, ldb);
            if (!zeroPrev) {
              let dot = 0;
              for (let i = 0; i < PN; i++) dot += rt[rOff + i]! * chunkStates[sPrev + i]!;
              dAL += EL * dot;
            }
            dAc[L - 1]! += dAL;
          }
          // Rᵀ_prev = E_{L−1}·Rᵀ + Cᵀ·gŶ (not needed before the first chunk without s0).
          if (!zeroPrev || gs0) {
            for (let i = rOff; i < rOff + PN; i++) rt[i]! *= EL;
            if (hasGy) gemm(false, false, N, P, L, 1, Ct, 0, Lc, gYs, 0, P, 1, rt, rOff, P);
          }
          // Λ → a → (dt, A).
          let da = 0;
          let gAh = 0;
          for (let k = L - 1; k >= 0; k--) {
            da += dAc[k]!;
            gdt[dtOff + k * H] = ddt[k]! + da * Ah;
            gAh += da * a.dt[dtOff + k * H]!;
          }
          gAacc[h]! += gAh;
        }
        if (hasGy) {
          gemm(false, false, L, N, L, 1, dCB, 0, Lc, a.B, bcOff, ldb, 1, gC, bcOff, ldb);
          transposeInto(dCB, 0, Lc, L, L, M, Lc);
          gemm(false, false, L, N, L, 1, M, 0, Lc, a.C, bcOff, ldb, 1, gB, bcOff, ldb);
        }
      }
      if (hasGy) zeroR = false;
    }
    if (gs0T) gs0T.set(rt, b * H * PN);
  }
  if (gs0 && gs0T) swapLastAxes(gs0T, batch * H, N, P, gs0);
  for (let h = 0; h < H; h++) gA[h] = gAacc[h]!;
  return { x: gx, dt: gdt, A: gA, B: gB, C: gC, s0: gs0 };
}
