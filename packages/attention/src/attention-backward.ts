/*
 * Backward of the tiled causal GQA attention (docs/model.md §4), FlashAttention-2 style. With
 * G = ∂y and Dvec[t] = Σ_e G[t,e]·y[t,e], tile by tile:
 *   P = e^{c·q·kᵀ − lse} (recomputed from the saved lse),  dV += Pᵀ G,  dP = G Vᵀ,
 *   dS = P ⊙ (dP − Dvec),  dQ += c·dS K,  dK += c·dSᵀ Q.
 * Tiles are held transposed (rows: keys, columns: the G·blockQ queries of a head group) so
 * each product is a plain row-major GEMM. A (batch, KV head) unit owns dk, dv of its KV head
 * and dq of its query heads, so units run in parallel (parallelFor) without write conflicts.
 * A registered native kernel (native/attention.c `flashBwd`, OpenMP over the same units) takes
 * over; these loops stay as fallback and reference.
 */
import {
  defineKernel,
  fastExp,
  gemm,
  kernelSet,
  optionalArg,
  parallelFor,
  transposeInto,
} from "@loop/tensor/kernel";
import { type FlashForwardArgs, flashSizes } from "./attention-forward.js";
import { groupTile } from "./attention-pack.js";

/** The forward's arguments (its outputs y and lse now read) and the gradients. */
export interface FlashBackwardArgs extends FlashForwardArgs {
  /** Upstream gradient ∂y. */
  gy: Float32Array;
  /** Outputs, zero on entry; those not needed are left untouched. */
  dq: Float32Array;
  dk: Float32Array;
  dv: Float32Array;
  needQ: boolean;
  needK: boolean;
  needV: boolean;
}

/** Units [lo, hi) of (batch, KV head) pairs, unit = b·Hkv + g. */
function backwardUnits(a: FlashBackwardArgs, lo: number, hi: number): void {
  const { q, k, v, y, lse, gy, dq, dk, dv, T, Hq, Hkv, hd, group: G, blockQ, blockK } = a;
  const starts = a.starts && a.starts.length > 0 ? a.starts : null;
  const { needQ, needK, needV } = a;
  const c = 1 / Math.sqrt(hd);
  const ldq = Hq * hd;
  const ldk = Hkv * hd;
  const n = G * blockQ;
  const kt = new Float32Array(hd * T);
  const qg = new Float32Array(n * hd); // [rows, hd]
  const qgT = new Float32Array(hd * n); // [hd, rows]
  const gg = new Float32Array(n * hd);
  const ggT = new Float32Array(hd * n);
  const dqgT = new Float32Array(hd * n);
  const dvec = new Float64Array(n);
  const lrow = new Float64Array(n);
  // Tiles are held transposed: rows are keys, columns are the G·br queries.
  const PT = new Float32Array(blockK * n);
  const dST = new Float32Array(blockK * n);
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
              if (starts && key < starts[b * T + r0 + R - jj * br]!) {
                PT[po + R] = 0; // a key of an earlier document
                dST[po + R] = 0;
                continue;
              }
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

const backwardKernel = defineKernel<FlashBackwardArgs>(
  "attention/flash-backward",
  import.meta.url,
  backwardUnits,
);

/**
 * native/attention.c flashBwd(q, k, v, y, lse, gy, dq|null, dk|null, dv|null, B, T, Hq, Hkv,
 * hd, blockQ, blockK, ldq, ldk, ldv, ldgq, ldgk, ldgv[, starts]): the given outputs are
 * overwritten; the positions of q, k, v, dq, dk, dv are ld· floats apart (0: packed), y and gy
 * are packed; starts as FlashForwardArgs.starts (left out: one document per row).
 */
export type FlashBwdNative = (
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  y: Float32Array,
  lse: Float32Array,
  gy: Float32Array,
  dq: Float32Array | null,
  dk: Float32Array | null,
  dv: Float32Array | null,
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
  ldgq: number,
  ldgk: number,
  ldgv: number,
  ...starts: [] | [Float32Array]
) => void;

/** Compute the needed gradients into `a.dq`, `a.dk`, `a.dv` (all zero on entry). */
export function flashBackward(a: FlashBackwardArgs): void {
  const nat = kernelSet("attention")?.flashBwd;
  if (nat) {
    nat(
      a.q,
      a.k,
      a.v,
      a.y,
      a.lse,
      a.gy,
      a.needQ ? a.dq : null,
      a.needK ? a.dk : null,
      a.needV ? a.dv : null,
      ...flashSizes(a),
      0,
      0,
      0,
      0,
      0,
      0,
      ...optionalArg(a.starts && a.starts.length > 0 ? a.starts : null),
    );
    return;
  }
  parallelFor(backwardKernel, a.B * a.Hkv, a);
}
