/**
 * Tiled causal grouped-query attention, FlashAttention-2 formulation (model.md §4).
 *
 *   q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd]; query head j uses KV head
 *   floor(j·Hkv/Hq); c = 1/sqrt(hd); S = c·q·kᵀ with s ≤ t; y = softmax(S)·v.
 *
 * Forward: for each tile of queries, walk the key tiles left of and on the diagonal keeping a
 * running row max m and row sum l (online softmax): O ← e^{m_old−m_new}·O + e^{S−m_new}·V.
 * The op saves only lse = m + log l per row ([B, Hq, T]) besides q, k, v and y.
 * Backward (G = ∂y, Dvec[t] = Σ_e G[t,e]·y[t,e]): tile by tile, recompute P = e^{S − lse},
 *   dV += Pᵀ G,  dP = G Vᵀ,  dS = P ⊙ (dP − Dvec),  dQ += c·dS K,  dK += c·dSᵀ Q.
 * Memory is linear in T: the largest temporaries are tiles [blockK, blockQ] and per-head
 * transposes [hd, T]; no [T, T] matrix exists. Every tile product goes through `gemm`; operands
 * are pre-transposed once per head so every product is a plain row-major (no-transpose) GEMM.
 */
import { allocF32, gemm, record1, type Tensor } from "@loop/tensor";
import { type AttentionDims, attentionDims } from "./attention-shapes.js";

export interface AttentionOptions {
  /** Query rows per tile (default 64). */
  blockQ?: number;
  /** Key columns per tile (default 64). */
  blockK?: number;
}

const DEFAULT_BLOCK = 64;

function blockSize(value: number | undefined, name: string): number {
  const b = value ?? DEFAULT_BLOCK;
  if (!Number.isInteger(b) || b <= 0) {
    throw new Error(`attention: ${name} must be a positive integer, got ${value}`);
  }
  return b;
}

/** dst[e, t] = src[off + t·ld + e] for t < T, e < hd: one head's rows as an [hd, T] matrix. */
function transposeHead(
  src: Float32Array,
  off: number,
  ld: number,
  T: number,
  hd: number,
  dst: Float32Array,
): void {
  for (let t = 0; t < T; t++) {
    const o = off + t * ld;
    for (let e = 0; e < hd; e++) dst[e * T + t] = src[o + e]!;
  }
}

/** Forward pass: fills y and lse [B, Hq, T]. */
export function flashForward(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  d: AttentionDims,
  blockQ: number,
  blockK: number,
  y: Float32Array,
  lse: Float32Array,
): void {
  const { B, T, Hq, Hkv, hd, group } = d;
  const c = 1 / Math.sqrt(hd);
  const ldq = Hq * hd;
  const ldk = Hkv * hd;
  const kt = allocF32(hd * T);
  const S = allocF32(blockQ * blockK);
  const m = new Float64Array(blockQ);
  const l = new Float64Array(blockQ);
  for (let b = 0; b < B; b++) {
    for (let g = 0; g < Hkv; g++) {
      const kBase = b * T * ldk + g * hd;
      transposeHead(k, kBase, ldk, T, hd, kt);
      for (let j = g * group; j < (g + 1) * group; j++) {
        const qBase = b * T * ldq + j * hd;
        for (let r0 = 0; r0 < T; r0 += blockQ) {
          const br = Math.min(blockQ, T - r0);
          const oOff = qBase + r0 * ldq;
          m.fill(Number.NEGATIVE_INFINITY, 0, br);
          l.fill(0, 0, br);
          for (let r = 0; r < br; r++) y.fill(0, oOff + r * ldq, oOff + r * ldq + hd);
          // Key tiles that some query of this tile can see: c0 ≤ r0 + br − 1.
          for (let c0 = 0; c0 < r0 + br; c0 += blockK) {
            const bc = Math.min(blockK, T - c0);
            gemm(false, false, br, bc, hd, c, q, oOff, ldq, kt, c0, T, 0, S, 0, bc);
            for (let r = 0; r < br; r++) {
              // Columns c < nValid are at key positions ≤ the query position r0 + r.
              const nValid = Math.min(bc, r0 + r - c0 + 1);
              const so = r * bc;
              if (nValid <= 0) {
                S.fill(0, so, so + bc);
                continue;
              }
              let rowMax = Number.NEGATIVE_INFINITY;
              for (let col = 0; col < nValid; col++) rowMax = Math.max(rowMax, S[so + col]!);
              const mOld = m[r]!;
              const mNew = Math.max(mOld, rowMax);
              let sum = 0;
              for (let col = 0; col < nValid; col++) {
                const p = Math.exp(S[so + col]! - mNew);
                S[so + col] = p;
                sum += p;
              }
              if (nValid < bc) S.fill(0, so + nValid, so + bc);
              if (mOld !== mNew) {
                // mOld = −∞ on the first visited tile: O and l are still zero, alpha = 0.
                const alpha = Math.exp(mOld - mNew);
                const o = oOff + r * ldq;
                for (let e = 0; e < hd; e++) y[o + e]! *= alpha;
                l[r] = l[r]! * alpha + sum;
                m[r] = mNew;
              } else {
                l[r] = l[r]! + sum;
              }
            }
            gemm(false, false, br, hd, bc, 1, S, 0, bc, v, kBase + c0 * ldk, ldk, 1, y, oOff, ldq);
          }
          const lseOff = (b * Hq + j) * T + r0;
          for (let r = 0; r < br; r++) {
            const inv = 1 / l[r]!;
            const o = oOff + r * ldq;
            for (let e = 0; e < hd; e++) y[o + e]! *= inv;
            lse[lseOff + r] = m[r]! + Math.log(l[r]!);
          }
        }
      }
    }
  }
}

/**
 * Backward pass: gradients of Σ y ⊙ gy with respect to q, k, v (dq, dk, dv zero on entry);
 * `needs` = [q, k, v] says which to compute (the others are left untouched).
 */
export function flashBackward(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  y: Float32Array,
  lse: Float32Array,
  gy: Float32Array,
  d: AttentionDims,
  blockQ: number,
  blockK: number,
  dq: Float32Array,
  dk: Float32Array,
  dv: Float32Array,
  needs: readonly boolean[] = [true, true, true],
): void {
  const { B, T, Hq, Hkv, hd, group } = d;
  const c = 1 / Math.sqrt(hd);
  const ldq = Hq * hd;
  const ldk = Hkv * hd;
  const [needQ, needK, needV] = needs;
  const kt = allocF32(hd * T);
  const qt = allocF32(hd * T);
  const gt = allocF32(hd * T);
  const dqt = allocF32(hd * T);
  const dvec = new Float64Array(T);
  // Tiles are held transposed: rows are keys, columns are queries.
  const PT = allocF32(blockK * blockQ);
  const dST = allocF32(blockK * blockQ);
  for (let b = 0; b < B; b++) {
    for (let g = 0; g < Hkv; g++) {
      const kBase = b * T * ldk + g * hd;
      transposeHead(k, kBase, ldk, T, hd, kt);
      for (let j = g * group; j < (g + 1) * group; j++) {
        const qBase = b * T * ldq + j * hd;
        const lseOff = (b * Hq + j) * T;
        transposeHead(q, qBase, ldq, T, hd, qt);
        transposeHead(gy, qBase, ldq, T, hd, gt);
        dqt.fill(0);
        for (let t = 0; t < T; t++) {
          const o = qBase + t * ldq;
          let s = 0;
          for (let e = 0; e < hd; e++) s += gy[o + e]! * y[o + e]!;
          dvec[t] = s;
        }
        for (let c0 = 0; c0 < T; c0 += blockK) {
          const bc = Math.min(blockK, T - c0);
          const kOff = kBase + c0 * ldk;
          // Query tiles with a query at position ≥ c0 (the first key of this tile).
          for (let r0 = Math.floor(c0 / blockQ) * blockQ; r0 < T; r0 += blockQ) {
            const br = Math.min(blockQ, T - r0);
            const qOff = qBase + r0 * ldq;
            gemm(false, false, bc, br, hd, c, k, kOff, ldk, qt, r0, T, 0, PT, 0, br);
            gemm(false, false, bc, br, hd, 1, v, kOff, ldk, gt, r0, T, 0, dST, 0, br);
            for (let col = 0; col < bc; col++) {
              const key = c0 + col;
              const po = col * br;
              // Queries r with r0 + r ≥ key see this key.
              const first = Math.max(0, key - r0);
              if (first > 0) {
                PT.fill(0, po, po + Math.min(first, br));
                dST.fill(0, po, po + Math.min(first, br));
              }
              for (let r = first; r < br; r++) {
                const p = Math.exp(PT[po + r]! - lse[lseOff + r0 + r]!);
                PT[po + r] = p;
                dST[po + r] = p * (dST[po + r]! - dvec[r0 + r]!);
              }
            }
            if (needV)
              gemm(false, false, bc, hd, br, 1, PT, 0, br, gy, qOff, ldq, 1, dv, kOff, ldk);
            if (needK)
              gemm(false, false, bc, hd, br, c, dST, 0, br, q, qOff, ldq, 1, dk, kOff, ldk);
            if (needQ) gemm(false, false, hd, br, bc, c, kt, c0, T, dST, 0, br, 1, dqt, r0, T);
          }
        }
        if (!needQ) continue;
        for (let e = 0; e < hd; e++) {
          const src = e * T;
          for (let t = 0; t < T; t++) dq[qBase + t * ldq + e] = dqt[src + t]!;
        }
      }
    }
  }
}

/**
 * Causal grouped-query attention with the tiled kernel (fused op with backward). Tile sizes
 * change only the order of floating-point operations, not the result.
 */
export function attention(q: Tensor, k: Tensor, v: Tensor, opts: AttentionOptions = {}): Tensor {
  const d = attentionDims(q, k, v, "attention");
  const bq = blockSize(opts.blockQ, "blockQ");
  const bk = blockSize(opts.blockK, "blockK");
  const y = allocF32(q.size);
  const lse = new Float32Array(d.B * d.Hq * d.T);
  flashForward(q.data, k.data, v.data, d, bq, bk, y, lse);
  return record1("attention", [q, k, v], y, q.shape, ([gy], needs) => {
    const dq = needs[0] ? allocF32(q.size) : null;
    const dk = needs[1] ? allocF32(k.size) : null;
    const dv = needs[2] ? allocF32(v.size) : null;
    const none = new Float32Array(0);
    flashBackward(
      q.data,
      k.data,
      v.data,
      y,
      lse,
      gy!,
      d,
      bq,
      bk,
      dq ?? none,
      dk ?? none,
      dv ?? none,
      needs,
    );
    return [dq, dk, dv];
  });
}
