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
 * Memory is linear in T: the largest temporaries are tiles [blockK, G·blockQ] (G = Hq/Hkv query
 * heads share each tile) and one transposed key head [hd, T]; no [T, T] matrix exists. Every
 * tile product goes through `gemm`; operands are packed (and transposed where needed) once per
 * tile so every product is a plain row-major GEMM.
 */
import { allocF32, gemm, record1, type Tensor } from "@loop/tensor";
import { type AttentionDims, attentionDims } from "./attention-shapes.js";
import { fastExp } from "./fast-exp.js";

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

/**
 * A query tile of a head group: the `group` heads starting at `base` (heads hd apart, tokens
 * `ld` apart), tokens r0..r0+br-1, as rows R = jj·br + r. `mode` "rows" writes dst [G·br, hd];
 * "cols" writes the transpose [hd, G·br]; "unpackCols" copies such a transpose back into src.
 */
function groupTile(
  src: Float32Array,
  base: number,
  ld: number,
  r0: number,
  br: number,
  group: number,
  hd: number,
  dst: Float32Array,
  mode: "rows" | "cols" | "unpackCols",
): void {
  const n = group * br;
  for (let jj = 0; jj < group; jj++) {
    for (let r = 0; r < br; r++) {
      const o = base + (r0 + r) * ld + jj * hd;
      const R = jj * br + r;
      if (mode === "rows") dst.set(src.subarray(o, o + hd), R * hd);
      else if (mode === "cols") for (let e = 0; e < hd; e++) dst[e * n + R] = src[o + e]!;
      else for (let e = 0; e < hd; e++) src[o + e] = dst[e * n + R]!;
    }
  }
}

/**
 * Forward pass: fills y and lse [B, Hq, T]. The query heads that share a KV head are processed
 * together, so each tile product has G·blockQ rows.
 */
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
  const { B, T, Hq, Hkv, hd, group: G } = d;
  const c = 1 / Math.sqrt(hd);
  const ldq = Hq * hd;
  const ldk = Hkv * hd;
  const kt = allocF32(hd * T);
  const qg = allocF32(G * blockQ * hd);
  const o = allocF32(G * blockQ * hd);
  const S = allocF32(G * blockQ * blockK);
  const m = new Float64Array(G * blockQ);
  const l = new Float64Array(G * blockQ);
  for (let b = 0; b < B; b++) {
    for (let g = 0; g < Hkv; g++) {
      const kBase = b * T * ldk + g * hd;
      const qBase = b * T * ldq + g * G * hd;
      transposeHead(k, kBase, ldk, T, hd, kt);
      for (let r0 = 0; r0 < T; r0 += blockQ) {
        const br = Math.min(blockQ, T - r0);
        const rows = G * br;
        groupTile(q, qBase, ldq, r0, br, G, hd, qg, "rows");
        m.fill(Number.NEGATIVE_INFINITY, 0, rows);
        l.fill(0, 0, rows);
        o.fill(0, 0, rows * hd);
        // Key tiles that some query of this tile can see: c0 ≤ r0 + br − 1.
        for (let c0 = 0; c0 < r0 + br; c0 += blockK) {
          const bc = Math.min(blockK, T - c0);
          gemm(false, false, rows, bc, hd, c, qg, 0, hd, kt, c0, T, 0, S, 0, bc);
          for (let R = 0; R < rows; R++) {
            const r = R % br;
            // Columns col < nValid are at key positions ≤ the query position r0 + r.
            const nValid = Math.min(bc, r0 + r - c0 + 1);
            const so = R * bc;
            if (nValid <= 0) {
              S.fill(0, so, so + bc);
              continue;
            }
            let rowMax = Number.NEGATIVE_INFINITY;
            for (let col = 0; col < nValid; col++) rowMax = Math.max(rowMax, S[so + col]!);
            const mOld = m[R]!;
            const mNew = Math.max(mOld, rowMax);
            let sum = 0;
            for (let col = 0; col < nValid; col++) {
              const p = fastExp(S[so + col]! - mNew);
              S[so + col] = p;
              sum += p;
            }
            if (nValid < bc) S.fill(0, so + nValid, so + bc);
            if (mOld !== mNew) {
              // mOld = −∞ on the first visited tile: O and l are still zero, alpha = 0.
              const alpha = fastExp(mOld - mNew);
              for (let e = R * hd; e < (R + 1) * hd; e++) o[e]! *= alpha;
              l[R] = l[R]! * alpha + sum;
              m[R] = mNew;
            } else {
              l[R] = l[R]! + sum;
            }
          }
          gemm(false, false, rows, hd, bc, 1, S, 0, bc, v, kBase + c0 * ldk, ldk, 1, o, 0, hd);
        }
        for (let R = 0; R < rows; R++) {
          const jj = Math.floor(R / br);
          const r = R % br;
          const inv = 1 / l[R]!;
          const yo = qBase + (r0 + r) * ldq + jj * hd;
          for (let e = 0; e < hd; e++) y[yo + e] = o[R * hd + e]! * inv;
          lse[(b * Hq + g * G + jj) * T + r0 + r] = m[R]! + Math.log(l[R]!);
        }
      }
    }
  }
}

/**
 * Backward pass: gradients of Σ y ⊙ gy with respect to q, k, v (dq, dk, dv zero on entry);
 * `needs` = [q, k, v] says which to compute (the others are left untouched). Heads sharing a
 * KV head are processed together as in the forward.
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
  const { B, T, Hq, Hkv, hd, group: G } = d;
  const c = 1 / Math.sqrt(hd);
  const ldq = Hq * hd;
  const ldk = Hkv * hd;
  const [needQ, needK, needV] = needs;
  const n = G * blockQ;
  const kt = allocF32(hd * T);
  const qg = allocF32(n * hd); // [rows, hd]
  const qgT = allocF32(hd * n); // [hd, rows]
  const gg = allocF32(n * hd);
  const ggT = allocF32(hd * n);
  const dqgT = allocF32(hd * n);
  const dvec = new Float64Array(n);
  const lrow = new Float64Array(n);
  // Tiles are held transposed: rows are keys, columns are the G·br queries.
  const PT = allocF32(blockK * n);
  const dST = allocF32(blockK * n);
  for (let b = 0; b < B; b++) {
    for (let g = 0; g < Hkv; g++) {
      const kBase = b * T * ldk + g * hd;
      const qBase = b * T * ldq + g * G * hd;
      transposeHead(k, kBase, ldk, T, hd, kt);
      for (let r0 = 0; r0 < T; r0 += blockQ) {
        const br = Math.min(blockQ, T - r0);
        const rows = G * br;
        groupTile(q, qBase, ldq, r0, br, G, hd, qg, "rows");
        groupTile(q, qBase, ldq, r0, br, G, hd, qgT, "cols");
        groupTile(gy, qBase, ldq, r0, br, G, hd, gg, "rows");
        groupTile(gy, qBase, ldq, r0, br, G, hd, ggT, "cols");
        dqgT.fill(0, 0, hd * rows);
        for (let R = 0; R < rows; R++) {
          const jj = Math.floor(R / br);
          const r = R % br;
          const yo = qBase + (r0 + r) * ldq + jj * hd;
          let s = 0;
          for (let e = 0; e < hd; e++) s += gy[yo + e]! * y[yo + e]!;
          dvec[R] = s;
          lrow[R] = lse[(b * Hq + g * G + jj) * T + r0 + r]!;
        }
        for (let c0 = 0; c0 < r0 + br; c0 += blockK) {
          const bc = Math.min(blockK, T - c0);
          const kOff = kBase + c0 * ldk;
          gemm(false, false, bc, rows, hd, c, k, kOff, ldk, qgT, 0, rows, 0, PT, 0, rows);
          gemm(false, false, bc, rows, hd, 1, v, kOff, ldk, ggT, 0, rows, 0, dST, 0, rows);
          for (let col = 0; col < bc; col++) {
            const key = c0 + col;
            const po = col * rows;
            for (let jj = 0; jj < G; jj++) {
              // Queries r with r0 + r ≥ key see this key.
              const first = Math.min(br, Math.max(0, key - r0));
              const ro = po + jj * br;
              if (first > 0) {
                PT.fill(0, ro, ro + first);
                dST.fill(0, ro, ro + first);
              }
              for (let R = jj * br + first; R < (jj + 1) * br; R++) {
                const p = fastExp(PT[po + R]! - lrow[R]!);
                PT[po + R] = p;
                dST[po + R] = p * (dST[po + R]! - dvec[R]!);
              }
            }
          }
          if (needV) gemm(false, false, bc, hd, rows, 1, PT, 0, rows, gg, 0, hd, 1, dv, kOff, ldk);
          if (needK) gemm(false, false, bc, hd, rows, c, dST, 0, rows, qg, 0, hd, 1, dk, kOff, ldk);
          if (needQ) gemm(false, false, hd, rows, bc, c, kt, c0, T, dST, 0, rows, 1, dqgT, 0, rows);
        }
        if (needQ) groupTile(dq, qBase, ldq, r0, br, G, hd, dqgT, "unpackCols");
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
