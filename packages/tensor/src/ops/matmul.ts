/*
 * Matrix products on the last two axes.
 *   matmul: Y[..., M, N] = op(A)[..., M, K] · op(B)[..., K, N], op = optional transpose of the
 *           last two axes; batch axes must match, or B may be a single matrix (rank 2) shared by
 *           every batch entry.
 *     ∂A = G · op(B)ᵀ (transposed back when transA),  ∂B = op(A)ᵀ · G (likewise).
 *   linear: y[..., out] = x[..., in] · Wᵀ with W [out, in] (PyTorch layout), optional bias.
 */
import { record1 } from "../autograd/node.js";
import { gemm } from "../kernels/gemm.js";
import { allocF32, allocF32Uninit, type Shape, shapeStr, type Tensor } from "../tensor.js";

/** Whether `matmul` transposes its first or second operand. */
export interface MatmulOptions {
  transA?: boolean;
  transB?: boolean;
}

/** Sizes of op(A)·op(B) on the last two axes, from matmulShape. */
export interface MatmulShape {
  tA: boolean;
  tB: boolean;
  M: number;
  N: number;
  K: number;
  /** Leading dimensions (columns as stored) of A and B. */
  ac: number;
  bc: number;
  /** Floats per matrix of A and of B (0 when B is shared). */
  sa: number;
  sb: number;
  /** The batch axes of A (and of the product). */
  batch: number[];
  /** B is one matrix (rank 2) shared by every batch entry. */
  shared: boolean;
}

/**
 * Check the operands of a matrix product (rank ≥ 2, equal inner sizes, matching batch axes or a
 * shared B) and return its sizes; `op` names the caller in the errors.
 */
export function matmulShape(op: string, a: Shape, b: Shape, opts: MatmulOptions): MatmulShape {
  const tA = opts.transA ?? false;
  const tB = opts.transB ?? false;
  if (a.length < 2 || b.length < 2) {
    throw new Error(`${op}: operands need rank ≥ 2, got ${shapeStr(a)} and ${shapeStr(b)}`);
  }
  const ar = a[a.length - 2]!;
  const ac = a[a.length - 1]!;
  const br = b[b.length - 2]!;
  const bc = b[b.length - 1]!;
  const M = tA ? ac : ar;
  const K = tA ? ar : ac;
  const Kb = tB ? bc : br;
  const N = tB ? br : bc;
  if (K !== Kb) {
    throw new Error(
      `${op}: inner sizes differ (${K} vs ${Kb}) for ${shapeStr(a)} · ${shapeStr(b)}`,
    );
  }
  const batch = a.slice(0, -2);
  const shared = b.length === 2;
  if (!shared && batch.join(",") !== b.slice(0, -2).join(",")) {
    throw new Error(`${op}: batch shapes differ: ${shapeStr(a)} vs ${shapeStr(b)}`);
  }
  return { tA, tB, M, N, K, ac, bc, sa: ar * ac, sb: shared ? 0 : br * bc, batch, shared };
}

/**
 * Batched matrix product op(a) · op(b) over the last two axes (leading axes batch, or b shared);
 * differentiable.
 */
export function matmul(a: Tensor, b: Tensor, opts: MatmulOptions = {}): Tensor {
  const s = matmulShape("matmul", a.shape, b.shape, opts);
  const { tA, tB, M, N, K, shared } = s;
  const { ac, bc, sa, sb } = s;
  const nb = a.size / (sa || 1);
  const y = allocF32Uninit(nb * M * N); // every block written with beta = 0
  for (let i = 0; i < nb; i++) {
    gemm(tA, tB, M, N, K, 1, a.data, i * sa, ac, b.data, i * sb, bc, 0, y, i * M * N, N);
  }
  return record1("matmul", [a, b], y, [...s.batch, M, N], ([g], needs) => {
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
