/*
 * The q, k, v projections, RoPE and causal GQA attention of docs/model.md §4 as one op:
 *   u [B, T, D], q_proj [Hq·hd, D], k_proj, v_proj [Hkv·hd, D] → y [B, T, Hq·hd] with
 *   y = attention(RoPE(u·q_projᵀ), RoPE(u·k_projᵀ), u·v_projᵀ)   (the input of o_proj).
 * On the native kernels the three projections are one GEMM into qkv [B, T, (Hq + 2·Hkv)·hd]
 * (weights stacked), RoPE rotates q and k in place there, and the attention kernel reads q, k, v
 * as column blocks of qkv. The backward mirrors it: the kernel writes ∂q, ∂k, ∂v side by side
 * into one buffer, RoPE turns ∂q, ∂k back in place, and ∂u = ∂qkv·W, ∂W = ∂qkvᵀ·u are one GEMM
 * each (three GEMMs on a third of the columns, and two sums for ∂u, cost more). Without the
 * native kernels it is the linear, rope and attention ops: the same values.
 */
import { linear, reshape, shapeStr, type Tensor } from "@loop/tensor";
import { allocF32Uninit, gemm, kernelSet, optionalArg, record1 } from "@loop/tensor/kernel";
import { type AttentionOptions, attention, blockSize, startsFor } from "./attention.js";
import { cachedTables, type RopeOptions, rope, rotate } from "./rope.js";

/** Options of `projectedAttention`: the head counts and RoPE, besides the kernel's tiling. */
export interface ProjectedAttentionOptions extends AttentionOptions {
  nHeads: number;
  nKvHeads: number;
  /** RoPE of q and k (theta default 10000, positions from offset, default 0). */
  rope?: RopeOptions;
}

function checkWeight(w: Tensor, rows: number, D: number, name: string): void {
  if (w.rank !== 2 || w.shape[0] !== rows || w.shape[1] !== D) {
    throw new Error(
      `projectedAttention: ${name} must be [${rows}, ${D}], got ${shapeStr(w.shape)}`,
    );
  }
}

/** y [B, T, Hq·hd] = causal attention of the RoPE-rotated projections of u (see above). */
export function projectedAttention(
  u: Tensor,
  wq: Tensor,
  wk: Tensor,
  wv: Tensor,
  opts: ProjectedAttentionOptions,
): Tensor {
  const { nHeads: Hq, nKvHeads: Hkv } = opts;
  if (u.rank !== 3) {
    throw new Error(`projectedAttention: u must be [B, T, D], got ${shapeStr(u.shape)}`);
  }
  const [B, T, D] = u.shape as [number, number, number];
  const whole = Number.isInteger(Hq) && Number.isInteger(Hkv) && Hq > 0 && Hkv > 0;
  if (!(whole && Hq % Hkv === 0 && wq.rank === 2 && wq.shape[0]! % Hq === 0)) {
    throw new Error(
      `projectedAttention: nHeads=${Hq} must be a positive multiple of nKvHeads=${Hkv} and divide q_proj's ${wq.shape[0]} rows`,
    );
  }
  const hd = wq.shape[0]! / Hq;
  const nq = Hq * hd;
  const nk = Hkv * hd;
  checkWeight(wq, nq, D, "q_proj");
  checkWeight(wk, nk, D, "k_proj");
  checkWeight(wv, nk, D, "v_proj");
  const ropeOpts = opts.rope ?? {};
  const nat = kernelSet("attention");
  if (!nat) {
    const q = rope(reshape(linear(u, wq), [B, T, Hq, hd]), ropeOpts);
    const k = rope(reshape(linear(u, wk), [B, T, Hkv, hd]), ropeOpts);
    const v = reshape(linear(u, wv), [B, T, Hkv, hd]);
    return reshape(attention(q, k, v, opts), [B, T, nq]);
  }
  const blockQ = blockSize(opts.blockQ, "blockQ");
  const blockK = blockSize(opts.blockK, "blockK");
  const { cos, sin } = cachedTables(hd, T, ropeOpts.theta ?? 10000, ropeOpts.offset ?? 0);
  const M = B * T;
  const W = nq + 2 * nk; // qkv row width
  const w = allocF32Uninit(W * D); // [q_proj; k_proj; v_proj], as they are now
  w.set(wq.data, 0);
  w.set(wk.data, nq * D);
  w.set(wv.data, (nq + nk) * D);
  const qkv = allocF32Uninit(M * W);
  gemm(false, true, M, W, D, 1, u.data, 0, D, w, 0, D, 0, qkv, 0, W);
  const [q, k, v] = [qkv, qkv.subarray(nq), qkv.subarray(nq + nk)];
  rotate(q, q, B, T, Hq, hd, cos, sin, 1, W);
  rotate(k, k, B, T, Hkv, hd, cos, sin, 1, W);
  const y = allocF32Uninit(M * nq); // every row of y and lse is written
  const lse = allocF32Uninit(B * Hq * T);
  const st = optionalArg(opts.seqIdx ? startsFor(opts, B, T) : null);
  const dims = [B, T, Hq, Hkv, hd, blockQ, blockK] as const; // the sizes both kernels take
  nat.flashFwd(q, k, v, y, lse, ...dims, W, W, W, ...st);
  return record1("projectedAttention", [u, wq, wk, wv], y, [B, T, nq], ([gy], needs) => {
    const g = allocF32Uninit(M * W); // ∂q | ∂k | ∂v per row, all written
    const [gq, gk, gv] = [g, g.subarray(nq), g.subarray(nq + nk)];
    nat.flashBwd(q, k, v, y, lse, gy!, gq, gk, gv, ...dims, W, W, W, W, W, W, ...st);
    rotate(gq, gq, B, T, Hq, hd, cos, sin, -1, W);
    rotate(gk, gk, B, T, Hkv, hd, cos, sin, -1, W);
    let gu: Float32Array | null = null;
    if (needs[0]) {
      gu = allocF32Uninit(M * D);
      gemm(false, false, M, D, W, 1, g, 0, W, w, 0, D, 0, gu, 0, D);
    }
    let gw: Float32Array | null = null;
    if (needs[1] || needs[2] || needs[3]) {
      gw = allocF32Uninit(W * D);
      gemm(true, false, W, D, M, 1, g, 0, W, u.data, 0, D, 0, gw, 0, D);
    }
    const part = (i: number, from: number, rows: number) =>
      gw && needs[i] ? gw.subarray(from * D, (from + rows) * D) : null;
    return [gu, part(1, 0, nq), part(2, nq, nk), part(3, nq + nk, nk)];
  });
}
