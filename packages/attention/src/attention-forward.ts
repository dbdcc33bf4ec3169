/*
 * Forward of the tiled causal GQA attention, FlashAttention-2 style (docs/model.md §4):
 *   q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd] and lse [B, Hq, T];
 *   query head j uses KV head floor(j·Hkv/Hq); c = 1/sqrt(hd); S = c·q·kᵀ (s ≤ t).
 * For each query tile walk the key tiles left of and on the diagonal with a running row max m
 * and row sum l (online softmax): O ← e^{m_old − m_new}·O + e^{S − m_new}·V; at the end
 * y = O / l and lse = m + log l. The G = Hq/Hkv query heads that share a KV head form one tile
 * of G·blockQ rows. Work is split over (batch, KV head) units, which write disjoint parts of y
 * and lse, with parallelFor (serial without a thread pool). A registered native kernel
 * (native/attention.c `flashFwd`, OpenMP over (batch, KV head, query tile)) takes over; these
 * loops stay as fallback and reference.
 */
import {
  defineKernel,
  fastExp,
  gemm,
  type KernelArgs,
  kernelSet,
  optionalArg,
  parallelFor,
  transposeInto,
} from "@loop/tensor/kernel";
import { groupTile } from "./attention-pack.js";
import type { AttentionDims } from "./attention-shapes.js";

/**
 * The buffers and tiling of one flash-attention forward call: q [B,T,Hq,hd], k and v [B,T,Hkv,hd],
 * output y [B,T,Hq,hd] and the per-row log-sum-exp lse [B,Hq,T], in tiles of blockQ query rows by
 * blockK key columns.
 */
export interface FlashForwardArgs extends KernelArgs, AttentionDims {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  y: Float32Array;
  lse: Float32Array;
  blockQ: number;
  blockK: number;
  /**
   * Packed documents: [B·T] first position of each query's document (documentStarts); keys
   * before it are masked like keys after the query. Absent or empty: one document per row.
   */
  starts?: Float32Array;
}

/** Units [lo, hi) of (batch, KV head) pairs, unit = b·Hkv + g. */
function forwardUnits(a: FlashForwardArgs, lo: number, hi: number): void {
  const { q, k, v, y, lse, T, Hq, Hkv, hd, group: G, blockQ, blockK } = a;
  const starts = a.starts && a.starts.length > 0 ? a.starts : null;
  const c = 1 / Math.sqrt(hd);
  const ldq = Hq * hd;
  const ldk = Hkv * hd;
  const kt = new Float32Array(hd * T);
  const qg = new Float32Array(G * blockQ * hd);
  const o = new Float32Array(G * blockQ * hd);
  const S = new Float32Array(G * blockQ * blockK);
  const m = new Float64Array(G * blockQ);
  const l = new Float64Array(G * blockQ);
  for (let unit = lo; unit < hi; unit++) {
    const b = Math.floor(unit / Hkv);
    const g = unit % Hkv;
    const kBase = b * T * ldk + g * hd;
    const qBase = b * T * ldq + g * G * hd;
    transposeInto(k, kBase, ldk, T, hd, kt, T);
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
          // Columns col < nValid are at key positions ≤ the query position r0 + r, and columns
          // col ≥ from in the query's document.
          const nValid = Math.min(bc, r0 + r - c0 + 1);
          const from = starts ? Math.max(0, starts[b * T + r0 + r]! - c0) : 0;
          const so = R * bc;
          if (nValid <= from) {
            S.fill(0, so, so + bc);
            continue;
          }
          let rowMax = Number.NEGATIVE_INFINITY;
          for (let col = from; col < nValid; col++) rowMax = Math.max(rowMax, S[so + col]!);
          const mOld = m[R]!;
          const mNew = Math.max(mOld, rowMax);
          let sum = 0;
          if (from > 0) S.fill(0, so, so + from);
          for (let col = from; col < nValid; col++) {
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

const forwardKernel = defineKernel<FlashForwardArgs>(
  "attention/flash-forward",
  import.meta.url,
  forwardUnits,
);

/**
 * native/attention.c flashFwd(q, k, v, y, lse, B, T, Hq, Hkv, hd, blockQ, blockK, ldq, ldk, ldv
 * [, starts]): the positions of q, k, v are ldq, ldk, ldv floats apart (0: packed), y is packed;
 * starts as FlashForwardArgs.starts (left out: one document per row).
 */
export type FlashFwdNative = (
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  y: Float32Array,
  lse: Float32Array,
  B: number,
  T: number,
  Hq: number,
  Hkv: number,
  hd: number,
  blockQ: number,
  blockK: number,
  ldq: number,
  ldk: number,
  ldv: number,
  ...starts: [] | [Float32Array]
) => void;

/** The sizes flashFwd and flashBwd take after their arrays, in their order. */
export function flashSizes(a: FlashForwardArgs) {
  return [a.B, a.T, a.Hq, a.Hkv, a.hd, a.blockQ, a.blockK] as const;
}

/** Fill `a.y` and `a.lse` (every entry is written). */
export function flashForward(a: FlashForwardArgs): void {
  const nat = kernelSet("attention")?.flashFwd;
  if (nat) {
    const st = optionalArg(a.starts && a.starts.length > 0 ? a.starts : null);
    nat(a.q, a.k, a.v, a.y, a.lse, ...flashSizes(a), 0, 0, 0, ...st);
    return;
  }
  parallelFor(forwardKernel, a.B * a.Hkv, a);
}
