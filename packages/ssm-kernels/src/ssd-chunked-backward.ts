/*
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
 * Two parallel passes (parallelFor; serial without a thread pool): the reverse recurrence per
 * (batch, head), which owns its rows of dx and ddt and writes per-head partial dB, dC, d(C·Bᵀ)
 * and ∂A; then per (batch, chunk, group) the sum over the group's heads and the two d(C·Bᵀ)
 * products. Every block product is a non-transposed gemm; the pass temporaries come from the
 * engine's scratch pool (withTemporaries) and go back to it when the call ends.
 * When the native addon is enabled (@loop/ssm-kernels/node), `ssd/backwardHeads` and
 * `ssd/backwardGroups` (native/ssd.c) run the two passes instead, same algorithm, on OpenMP
 * threads.
 */
import {
  allocF32,
  allocShared,
  allocShared64,
  defineKernel,
  gemm,
  kernelSet,
  parallelFor,
  shareable,
  transposeInto,
  withTemporaries,
} from "@loop/tensor/kernel";
import { dskipBackward } from "./mamba2-ops.js";
import { backwardNative } from "./ssd-chunked-backward-native.js";
import { type ChunkDims, chunkDims, type SsdChunkedSaved } from "./ssd-chunked-forward.js";
import { chunkDecays, swapLastAxes } from "./ssd-chunked-util.js";
import type { SsdArrays, SsdGrads, SsdShape } from "./ssd-shape.js";

interface HeadArgs {
  [k: string]: unknown;
  d: ChunkDims;
  x: Float32Array;
  dt: Float32Array;
  A: Float32Array;
  B: Float32Array;
  C: Float32Array;
  gy: Float32Array;
  hasGy: boolean;
  hasS0: boolean;
  /** [B·T] document starts (documentResets), or an empty array. */
  resets: Float32Array;
  hasGs: boolean;
  /** Rᵀ [B,H,N,P]: final-state gradient in, initial-state gradient out. */
  rt: Float32Array;
  chunkStates: Float32Array;
  cb: Float32Array;
  gx: Float32Array;
  gdt: Float32Array;
  /** Per (b,h) partial ∂A. */
  gAh: Float64Array;
  /** Per-head partial dB, dC: [B,T,H,N]. */
  gBh: Float32Array;
  gCh: Float32Array;
  /** Per-head d(C·Bᵀ): [B,nc,H,L,L]. */
  dCB: Float32Array;
}

/** Reverse chunk recurrence for items (b, h) in [lo, hi). */
const headKernel = defineKernel<HeadArgs>("ssm/ssd-bwd-head", import.meta.url, (a, lo, hi) => {
  const { T, H, P, G, N, Lc, nc } = a.d;
  const { x, dt, A, B, C, rt, chunkStates, cb, gx, gdt, gBh, gCh, dCB } = a;
  const resets = a.resets.length > 0 ? a.resets : null;
  const PN = P * N;
  const hpg = H / G;
  const ldx = H * P;
  const ldb = G * N;
  const ldh = H * N;
  const gy = a.gy;
  const M = new Float32Array(Lc * Lc);
  const dM = new Float32Array(Lc * Lc);
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
  for (let item = lo; item < hi; item++) {
    const h = item % H;
    const b = Math.floor(item / H);
    const g = Math.floor(h / hpg);
    const Ah = A[h]!;
    const rOff = item * PN;
    // True while R is still exactly zero (no final-state gradient, nothing propagated yet).
    let zeroR = !a.hasGs;
    let gAh = 0;
    for (let c = nc - 1; c >= 0; c--) {
      const t0 = c * Lc;
      const L = Math.min(Lc, T - t0);
      const zeroPrev = !a.hasS0 && c === 0;
      const bcOff = ((b * T + t0) * G + g) * N;
      const hOff = ((b * T + t0) * H + h) * N;
      const cbOff = ((b * nc + c) * G + g) * Lc * Lc;
      const dcbOff = ((b * nc + c) * H + h) * Lc * Lc;
      const dtOff = (b * T + t0) * H + h;
      const xOff = ((b * T + t0) * H + h) * P;
      const sPrev = (item * nc + c) * PN;
      chunkDecays(dt, dtOff, H, Ah, L, e, E, resets, b * T + t0);
      dAc.fill(0);
      ddt.fill(0);
      if (a.hasGy) {
        // Intra-chunk block: dM = gY·Xᵀ; rebuild M as Mᵀ (stored in M) for dX = Mᵀ·gY.
        transposeInto(x, xOff, ldx, L, P, Xt, Lc);
        gemm(false, false, L, L, P, 1, gy, xOff, ldx, Xt, 0, Lc, 0, dM, 0, Lc);
        for (let i = 0; i < L; i++) {
          const ei = e[i]!;
          const row = i * Lc;
          let dAi = 0;
          for (let j = 0; j <= i; j++) {
            const lij = j < i ? dec[j]! * ei : 1;
            dec[j] = lij;
            const dtj = dt[dtOff + j * H]!;
            const cbij = cb[cbOff + row + j]!;
            const m = cbij * lij * dtj;
            M[j * Lc + i] = m;
            const dm = dM[row + j]!;
            dCB[dcbOff + row + j] = dm * lij * dtj;
            ddt[j]! += dm * cbij * lij;
            const dseg = dm * m;
            dAi += dseg;
            dAc[j]! -= dseg;
          }
          dCB.fill(0, dcbOff + row + i + 1, dcbOff + row + L);
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
          gemm(false, false, L, P, N, 1, C, bcOff, ldb, chunkStates, sPrev, P, 0, tmpLP, 0, P);
          for (let i = 0; i < L; i++) {
            let d = 0;
            for (let p = 0; p < P; p++) d += gYs[i * P + p]! * tmpLP[i * P + p]!;
            dAc[i]! += d;
          }
          transposeInto(chunkStates, sPrev, P, N, P, Spn, N);
          gemm(false, false, L, N, P, 1, gYs, 0, P, Spn, 0, N, 0, gCh, hOff, ldh);
        }
      }
      // Chunk-state path, through R = ∂L/∂S_end.
      const EL = E[L - 1]!;
      if (!zeroR) {
        // RB = B·Rᵀ [L,P]: dX_j += w_j·RB_j, ∂w_j = x_j·RB_j; then dB += diag(w)·X·R.
        gemm(false, false, L, P, N, 1, B, bcOff, ldb, rt, rOff, P, 0, tmpLP, 0, P);
        let dAL = 0;
        let wdec = 1;
        for (let j = L - 1; j >= 0; j--) {
          const w = wdec * dt[dtOff + j * H]!;
          const xr = xOff + j * ldx;
          let dw = 0;
          for (let p = 0; p < P; p++) {
            const rb = tmpLP[j * P + p]!;
            const xv = x[xr + p]!;
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
        gemm(false, false, L, N, P, 1, tmpLP, 0, P, Spn, 0, N, 0, gBh, hOff, ldh);
        if (!zeroPrev) {
          let dot = 0;
          for (let i = 0; i < PN; i++) dot += rt[rOff + i]! * chunkStates[sPrev + i]!;
          dAL += EL * dot;
        }
        dAc[L - 1]! += dAL;
      }
      // Rᵀ_prev = E_{L−1}·Rᵀ + Cᵀ·gŶ (not needed before the first chunk without s0).
      if (!zeroPrev || a.hasS0) {
        for (let i = rOff; i < rOff + PN; i++) rt[i]! *= EL;
        if (a.hasGy) {
          transposeInto(C, bcOff, ldb, L, N, Ct, Lc);
          gemm(false, false, N, P, L, 1, Ct, 0, Lc, gYs, 0, P, 1, rt, rOff, P);
        }
      }
      // Λ → a → (dt, A).
      let da = 0;
      for (let k = L - 1; k >= 0; k--) {
        da += dAc[k]!;
        gdt[dtOff + k * H] = ddt[k]! + da * Ah;
        gAh += da * dt[dtOff + k * H]!;
      }
      if (a.hasGy) zeroR = false;
    }
    a.gAh[item] = gAh;
  }
});

interface GroupArgs {
  [k: string]: unknown;
  d: ChunkDims;
  B: Float32Array;
  C: Float32Array;
  hasGy: boolean;
  gBh: Float32Array;
  gCh: Float32Array;
  dCB: Float32Array;
  gB: Float32Array;
  gC: Float32Array;
}

/** Per (b, c, g) in [lo, hi): dC = Σ_h gC_h + d(CBᵀ)·B, dB = Σ_h gB_h + d(CBᵀ)ᵀ·C. */
const groupKernel = defineKernel<GroupArgs>("ssm/ssd-bwd-group", import.meta.url, (a, lo, hi) => {
  const { T, H, G, N, Lc, nc } = a.d;
  const { B, C, gBh, gCh, dCB, gB, gC } = a;
  const hpg = H / G;
  const ldb = G * N;
  const LL = Lc * Lc;
  const sum = new Float32Array(LL);
  const sumT = new Float32Array(LL);
  for (let item = lo; item < hi; item++) {
    const g = item % G;
    const c = Math.floor(item / G) % nc;
    const b = Math.floor(item / (G * nc));
    const t0 = c * Lc;
    const L = Math.min(Lc, T - t0);
    const bcOff = ((b * T + t0) * G + g) * N;
    for (let t = 0; t < L; t++) {
      const dst = bcOff + t * ldb;
      const src = ((b * T + t0 + t) * H + g * hpg) * N;
      for (let n = 0; n < N; n++) {
        let sb = 0;
        let sc = 0;
        for (let hh = 0; hh < hpg; hh++) {
          sb += gBh[src + hh * N + n]!;
          sc += gCh[src + hh * N + n]!;
        }
        gB[dst + n] = sb;
        gC[dst + n] = sc;
      }
    }
    if (!a.hasGy) continue;
    const base = (b * nc + c) * H + g * hpg;
    sum.set(dCB.subarray(base * LL, (base + 1) * LL));
    for (let hh = 1; hh < hpg; hh++) {
      const o = (base + hh) * LL;
      for (let i = 0; i < LL; i++) sum[i]! += dCB[o + i]!;
    }
    gemm(false, false, L, N, L, 1, sum, 0, Lc, B, bcOff, ldb, 1, gC, bcOff, ldb);
    transposeInto(sum, 0, Lc, L, L, sumT, Lc);
    gemm(false, false, L, N, L, 1, sumT, 0, Lc, C, bcOff, ldb, 1, gB, bcOff, ldb);
  }
});

/**
 * Gradients of the chunked SSD scan from what its forward saved and the output (and final state)
 * gradients.
 */
export function ssdChunkedBackward(
  s: SsdShape,
  a: SsdArrays,
  saved: SsdChunkedSaved,
  gy: Float32Array | null,
  gState: Float32Array | null,
): SsdGrads {
  const d = chunkDims(s, saved.chunkSize);
  const heads = kernelSet("ssd")?.backwardHeads;
  const groups = kernelSet("ssd")?.backwardGroups;
  if (heads && groups) return backwardNative(heads, groups, d, a, saved, gy, gState);
  const { batch, T, H, P, G, N, Lc, nc } = d;
  const PN = P * N;
  const gx = allocShared(a.x.length);
  const gdt = allocShared(a.dt.length);
  const gB = allocShared(a.B.length);
  const gC = allocShared(a.C.length);
  const gs0 = a.s0 ? new Float32Array(a.s0.length) : null;
  // Rᵀ, the per-head partials and the staged inputs die with this call: pooled temporaries
  const gA = withTemporaries(() => {
    const rt = allocShared(batch * H * PN);
    if (gState) swapLastAxes(gState, batch * H, P, N, rt);
    const gAh = allocShared64(batch * H);
    const gBh = allocShared(batch * T * H * N);
    const gCh = allocShared(batch * T * H * N);
    const dCB = allocShared(gy ? batch * nc * H * Lc * Lc : 0);
    const B = shareable(a.B);
    const C = shareable(a.C);
    parallelFor(headKernel, batch * H, {
      d,
      x: shareable(a.x),
      dt: shareable(a.dt),
      A: shareable(a.A),
      B,
      C,
      gy: gy ? shareable(gy) : allocF32(0),
      hasGy: gy !== null,
      hasS0: a.s0 !== null,
      resets: a.resets ? shareable(a.resets) : allocShared(0),
      hasGs: gState !== null,
      rt,
      chunkStates: shareable(saved.chunkStates),
      cb: shareable(saved.cb),
      gx,
      gdt,
      gAh,
      gBh,
      gCh,
      dCB,
    });
    parallelFor(groupKernel, batch * nc * G, {
      d,
      B,
      C,
      hasGy: gy !== null,
      gBh,
      gCh,
      dCB,
      gB,
      gC,
    });
    if (gs0) swapLastAxes(rt, batch * H, N, P, gs0);
    const gAsum = new Float32Array(H);
    for (let h = 0; h < H; h++) {
      let v = 0;
      for (let b = 0; b < batch; b++) v += gAh[b * H + h]!;
      gAsum[h] = v;
    }
    return gAsum;
  });
  let gD: Float32Array | null = null;
  if (a.D) gD = gy ? dskipBackward(gx, gy, a.x, a.D, P) : new Float32Array(H);
  return { x: gx, dt: gdt, A: gA, B: gB, C: gC, s0: gs0, D: gD };
}
