/**
 * Matrix products on the last two axes.
 *   matmul: Y[..., M, N] = op(A)[..., M, K] · op(B)[..., K, N], op = optional transpose of the
 *           last two axes; batch axes must match, or B may be a single matrix (rank 2) shared by
 *           every batch entry.
 *     ∂A = G · op(B)ᵀ (transposed back when transA),  ∂B = op(A)ᵀ · G (likewise).
 *   linear: y[..., out] = x[..., in] · Wᵀ with W [out, in] (PyTorch layout), optional bias.
 */
import { record1 } from "../autograd/node.js";
import { gemm } from "../kernels/gemm.js";
import { allocF32, allocF32Uninit, shapeStr, type Tensor } from "../tensor.js";

export interface MatmulOptions {
  transA?: boolean;
  transB?: boolean;
}

export function matmul(a: Tensor, b: Tensor, opts: MatmulOptions = {}): Tensor {
  const tA = opts.transA ?? false;
  const tB = opts.transB ?? false;
  if (a.rank < 2 || b.rank < 2) {
    throw new Error(
      `matmul: operands need rank ≥ 2, got ${shapeStr(a.shape)} and ${shapeStr(b.shape)}`,
    );
  }
  const ar = a.shape[a.rank - 2]!;
  const ac = a.shape[a.rank - 1]!;
  const br = b.shape[b.rank - 2]!;
  const bc = b.shape[b.rank - 1]!;
  const M = tA ? ac : ar;
  const K = tA ? ar : ac;
  const Kb = tB ? bc : br;
  const N = tB ? br : bc;
  if (K !== Kb) {
    throw new Error(
      `matmul: inner sizes differ (${K} vs ${Kb}) for ${shapeStr(a.shape)} · ${shapeStr(b.shape)}`,
    );
  }
  const batchA = a.shape.slice(0, -2);
  const batchB = b.shape.slice(0, -2);
  const shared = b.rank === 2;
  if (!shared && batchA.join(",") !== batchB.join(",")) {
    throw new Error(`matmul: batch shapes differ: ${shapeStr(a.shape)} vs ${shapeStr(b.shape)}`);
  }
  const nb = a.size / (ar * ac || 1);
  const y = allocF32Uninit(nb * M * N); // every block written with beta = 0
  const sa = ar * ac;
  const sb = shared ? 0 : br * bc;
  for (let i = 0; i < nb; i++) {
    gemm(tA, tB, M, N, K, 1, a.data, i * sa, ac, b.data, i * sb, bc, 0, y, i * M * N, N);
  }
  return record1("matmul", [a, b], y, [...batchA, M, N], ([g], needs) => {
    const gy = g!;
    let ga: Float32Array | null = null;
    let gb: Float32Array | null = null;
    if (needs[0]) {
      ga = allocF32(a.size);
      for (let i = 0; i < nb; i++) {
        // A [M,K]: dA = G·op(B)ᵀ ; A stored [K,M] (transA): dA = op(B)·Gᵀ
        if (!tA)
          gemm(false, !tB, M, K, N, 1, gy, i * M * N, N, b.data, i * sb, bc, 0, ga, i * sa, ac);
        else gemm(tB, true, K, M, N, 1, b.data, i * sb, bc, gy, i * M * N, N, 0, ga, i * sa, ac);
      }
    }
    if (needs[1]) {
      gb = allocF32(b.size);
      for (let i = 0; i < nb; i++) {
        const beta = shared && i > 0 ? 1 : 0;
        // B [K,N]: dB = op(A)ᵀ·G ; B stored [N,K] (transB): dB = Gᵀ·op(A)
        if (!tB)
          gemm(!tA, false, K, N, M, 1, a.data, i * sa, ac, gy, i * M * N, N, beta, gb, i * sb, bc);
        else gemm(true, tA, N, K, M, 1, gy, i * M * N, N, a.data, i * sa, ac, beta, gb, i * sb, bc);
      }
    }
    return [ga, gb];
  });
}

/** y = x · Wᵀ (+ bias): x [..., in], W [out, in], bias [out]. */
export function linear(x: Tensor, w: Tensor, bias?: Tensor): Tensor {
  if (w.rank !== 2) throw new Error(`linear: weight must be [out, in], got ${shapeStr(w.shape)}`);
  const [nOut, nIn] = w.shape as [number, number];
  if (x.lastDim !== nIn) {
    throw new Error(
      `linear: input ${shapeStr(x.shape)} has last axis ${x.lastDim}, weight expects ${nIn}`,
    );
  }
  if (bias && (bias.rank !== 1 || bias.size !== nOut)) {
    throw new Error(`linear: bias must be [${nOut}], got ${shapeStr(bias.shape)}`);
  }
  const M = x.rows;
  const y = allocF32Uninit(M * nOut); // bias rows or beta = 0 write all of it
  if (bias) for (let i = 0; i < M; i++) y.set(bias.data, i * nOut);
  gemm(false, true, M, nOut, nIn, 1, x.data, 0, nIn, w.data, 0, nIn, bias ? 1 : 0, y, 0, nOut);
  const inputs = bias ? [x, w, bias] : [x, w];
  return record1("linear", inputs, y, [...x.shape.slice(0, -1), nOut], ([g], needs) => {
    const gy = g!;
    let gx: Float32Array | null = null;
    let gw: Float32Array | null = null;
    let gbias: Float32Array | null = null;
    if (needs[0]) {
      gx = allocF32Uninit(x.size);
      gemm(false, false, M, nIn, nOut, 1, gy, 0, nOut, w.data, 0, nIn, 0, gx, 0, nIn);
    }
    if (needs[1]) {
      gw = allocF32Uninit(w.size);
      gemm(true, false, nOut, nIn, M, 1, gy, 0, nOut, x.data, 0, nIn, 0, gw, 0, nIn);
    }
    if (bias && needs[2]) {
      gbias = allocF32(nOut);
      for (let i = 0; i < M; i++) for (let j = 0; j < nOut; j++) gbias[j]! += gy[i * nOut + j]!;
    }
    return bias ? [gx, gw, gbias] : [gx, gw];
  });
}
