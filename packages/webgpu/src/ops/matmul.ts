/*
 * Matrix products on GPU tensors, mirroring @loop/tensor's matmul and linear:
 *   matmul: Y[..., M, N] = op(A)[..., M, K] · op(B)[..., K, N] (op = optional transpose of the
 *           last two axes; batch axes match, or B is one matrix shared by every batch entry)
 *     ∂A = G · op(B)ᵀ (transposed back when transA),  ∂B = op(A)ᵀ · G (likewise; summed over the
 *     batch when B is shared)
 *   linear: y[..., out] = x[..., in] · Wᵀ (+ bias) with W [out, in];
 *     ∂x = g · W,  ∂W = gᵀ · x,  ∂bias = Σ_rows g
 * Every product is one tiled GEMM dispatch (kernels/gemm.ts).
 */
import { type MatmulOptions, matmulShape, shapeStr } from "@loop/tensor";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { recordGpu } from "../tape.js";
import { sumColumns } from "./column-sum.js";
import { type F16Input, f16Input, linearForwardF16 } from "./f16-input.js";
import { type GemmOperand, gemm } from "./gemm.js";
import { linearForward, linearGradInput, linearGradWeight } from "./linear-gemms.js";

/** Batched matrix product op(a) · op(b) over the last two axes, on the GPU; differentiable. */
export function matmul(a: GpuTensor, b: GpuTensor, opts: MatmulOptions = {}): GpuTensor {
  const s = matmulShape("webgpu matmul", a.shape, b.shape, opts);
  const { tA, tB, M, N, K, shared } = s;
  const { ac, bc, sa, sb } = s;
  const ctx = a.ctx;
  const batchShape = s.batch;
  const nb = batchShape.reduce((p, d) => p * d, 1);
  const y = emptyLike(ctx, [...batchShape, M, N]);
  gemm(ctx, {
    transA: tA,
    transB: tB,
    M,
    N,
    K,
    batch: nb,
    a: { buf: a.buffer, ld: ac, stride: sa },
    b: { buf: b.buffer, ld: bc, stride: sb },
    c: { buf: y.buffer, ld: N, stride: M * N },
  });
  recordGpu("matmul", [a, b], [y], ([g]) => {
    const gy = g!;
    let ga: GpuTensor | null = null;
    let gb: GpuTensor | null = null;
    const G = { buf: gy.buffer, ld: N, stride: M * N };
    const A = { buf: a.buffer, ld: ac, stride: sa };
    const B = { buf: b.buffer, ld: bc, stride: sb };
    if (a.requiresGrad) {
      ga = emptyLike(ctx, a.shape);
      const C = { buf: ga.buffer, ld: ac, stride: sa };
      // A [M,K]: ∂A = G·op(B)ᵀ;  A stored [K,M] (transA): ∂A = op(B)·Gᵀ
      if (!tA)
        gemm(ctx, { transA: false, transB: !tB, M, N: K, K: N, batch: nb, a: G, b: B, c: C });
      else gemm(ctx, { transA: tB, transB: true, M: K, N: M, K: N, batch: nb, a: B, b: G, c: C });
    }
    if (b.requiresGrad) {
      gb = emptyLike(ctx, b.shape);
      const C = { buf: gb.buffer, ld: bc, stride: sb };
      if (shared && !tA) {
        // Σ over the batch of op(A)ᵀ·G is one product over the stacked rows [nb·M, K].
        const As = { buf: a.buffer, ld: ac };
        const Gs = { buf: gy.buffer, ld: N };
        if (!tB) gemm(ctx, { transA: true, transB: false, M: K, N, K: nb * M, a: As, b: Gs, c: C });
        else gemm(ctx, { transA: true, transB: false, M: N, N: K, K: nb * M, a: Gs, b: As, c: C });
      } else {
        // One batched dispatch, or (shared B under transA) the entries added in batch order.
        const runs = shared ? nb : 1;
        for (let i = 0; i < runs; i++) {
          const off = (s: { stride: number }) => (shared ? i * s.stride : 0);
          const Ai = { ...A, off: off(A) };
          const Gi = { ...G, off: off(G) };
          const beta = shared && i > 0 ? 1 : 0;
          const batch = shared ? 1 : nb;
          // B [K,N]: ∂B = op(A)ᵀ·G;  B stored [N,K] (transB): ∂B = Gᵀ·op(A)
          const call = !tB
            ? { transA: !tA, transB: false, M: K, N, a: Ai, b: Gi }
            : { transA: true, transB: tA, M: N, N: K, a: Gi, b: Ai };
          gemm(ctx, { ...call, K: M, batch, c: C, beta });
        }
      }
    }
    return [ga, gb];
  });
  return y;
}

/**
 * y = x · Wᵀ (+ bias): x [..., in], W [out, in], bias [out]. Under mixed precision x's f16 copy
 * (ops/f16-input.ts; `shared` when several weights read the same x) is what the backward keeps.
 */
export function linear(
  x: GpuTensor,
  w: GpuTensor,
  bias?: GpuTensor,
  shared?: F16Input | null,
): GpuTensor {
  if (w.rank !== 2)
    throw new Error(`webgpu linear: weight must be [out, in], got ${shapeStr(w.shape)}`);
  const [nOut, nIn] = w.shape as [number, number];
  if (x.lastDim !== nIn)
    throw new Error(
      `webgpu linear: input ${shapeStr(x.shape)} has last axis ${x.lastDim}, weight expects ${nIn}`,
    );
  if (bias && (bias.rank !== 1 || bias.size !== nOut))
    throw new Error(`webgpu linear: bias must be [${nOut}], got ${shapeStr(bias.shape)}`);
  const ctx = x.ctx;
  const M = x.rows;
  const shape = { M, nIn, nOut };
  const y = emptyLike(ctx, [...x.shape.slice(0, -1), nOut]);
  const W = { buf: w.buffer, ld: nIn };
  const Y = { buf: y.buffer, ld: nOut };
  // split-K partials left for y's consumer (the residual add after an output projection)
  const opts = { bias: bias?.buffer, sumInto: y };
  const inp = shared ?? f16Input(x, nIn);
  let X: GemmOperand = { buf: x.buffer, ld: nIn };
  if (inp) X = linearForwardF16(inp, shape, W, Y, opts);
  else linearForward(ctx, shape, X, W, Y, opts);
  const inputs = bias ? [x, w, bias] : [x, w];
  const recorded = recordGpu(
    "linear",
    inputs,
    [y],
    ([g]) => {
      const G = { buf: g!.buffer, ld: nOut };
      const gx = x.requiresGrad ? linearGradInput(x, shape, G, W) : null;
      const gw = w.requiresGrad ? linearGradWeight(w, shape, G, X) : null;
      const gbias = bias?.requiresGrad ? sumColumns(g!, nOut) : null;
      if (!shared) inp?.tensor?.dispose();
      return bias ? [gx, gw, gbias] : [gx, gw];
    },
    // under mixed precision the backward reads x's f16 copy, not x
    inp ? inputs.slice(1) : inputs,
  );
  if (!recorded && !shared) inp?.tensor?.dispose();
  return y;
}
