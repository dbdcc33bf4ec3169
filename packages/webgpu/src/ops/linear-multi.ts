/*
 * Up to three linear layers of one input with separate weights (attention's q, k, v projections;
 * the MLP's gate and up): y_k = x · W_kᵀ, W_k [out_k, in]. Each of the forward, ∂x and the
 * weight gradients is one GEMM over the weights and outputs where they live (gemm-segmented.ts):
 *   [y_k] = x · [W_k]ᵀ,  ∂x = [g_k] · [W_k],  [∂W_k] = [g_k]ᵀ · x
 * — the same values as one `linear` per weight up to float32 reassociation of ∂x (one sum over
 * every output feature instead of per-weight products added). Under mixed precision, with a
 * weight passed twice or more than three, it is one `linear` per weight. The forward and ∂x GEMMs
 * are linear-gemms.ts's.
 */
import { shapeStr } from "@loop/tensor";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { gradTarget, recordGpu } from "../tape.js";
import { fillTensor } from "./elementwise-plain.js";
import { f16Input } from "./f16-input.js";
import { type GemmPiece, gemmSegmented, segmentedGemmOk } from "./gemm-segmented.js";
import { linearForward, linearGradInput, linearGradWeight } from "./linear-gemms.js";
import { linear } from "./matmul.js";

/** linear(x, w) for each w of `ws` (the contract's `linears`), as one GEMM each way where it can. */
export function linearMulti(x: GpuTensor, ws: readonly GpuTensor[]): GpuTensor[] {
  const nIn = x.lastDim;
  for (const w of ws)
    if (w.rank !== 2 || w.shape[1] !== nIn)
      throw new Error(
        `webgpu linearMulti: weight ${shapeStr(w.shape)} does not take an input ${shapeStr(x.shape)}`,
      );
  const ctx = x.ctx;
  if (ws.length > 3 || new Set(ws).size !== ws.length || !segmentedGemmOk(ctx)) {
    // under mixed precision x is rounded to f16 once for every weight (ops/f16-input.ts)
    const inp = f16Input(x, nIn);
    return ws.map((w) => linear(x, w, undefined, inp));
  }
  const M = x.rows;
  const widths = ws.map((w) => w.shape[0]!);
  const nOut = widths.reduce((a, b) => a + b, 0);
  const lead = x.shape.slice(0, -1);
  const X = { buf: x.buffer, ld: nIn };
  const piecesOf = (ts: readonly GpuTensor[], ld: (k: number) => number): GemmPiece[] =>
    ts.map((t, k) => ({ buf: t.buffer, ld: ld(k), len: widths[k]! }));
  // the weights stacked along their rows: [out, in] as pieces
  const W = { axis: "rows" as const, pieces: piecesOf(ws, () => nIn) };
  const ys = widths.map((n) => emptyLike(ctx, [...lead, n]));
  linearForward(ctx, { M, nIn, nOut }, X, W, {
    axis: "cols",
    pieces: piecesOf(ys, (k) => Math.max(1, widths[k]!)),
  });
  recordGpu("linearMulti", [x, ...ws], ys, (gys) => {
    // a missing output gradient reads as zeros (a fresh zero tensor for its piece)
    const gs = gys.map((g, k) => g ?? fillTensor(ctx, ys[k]!.shape, 0));
    const G = { axis: "cols" as const, pieces: piecesOf(gs, (k) => Math.max(1, widths[k]!)) };
    const gx = x.requiresGrad ? linearGradInput(x, { M, nIn, nOut }, G, W) : null;
    const gws: (GpuTensor | null)[] = ws.map(() => null);
    const need = ws.map((w) => w.requiresGrad);
    if (need.every(Boolean)) {
      const targets = ws.map((w) => gradTarget(w));
      targets.forEach((t, k) => {
        gws[k] = t.out;
      });
      gemmSegmented(ctx, {
        transA: true,
        transB: false,
        M: nOut,
        N: nIn,
        K: M,
        a: G,
        b: X,
        c: {
          axis: "rows",
          pieces: targets.map((t, k) => ({
            buf: t.out.buffer,
            ld: nIn,
            len: widths[k]!,
            beta: t.accumulate ? 1 : 0,
          })),
        },
      });
    } else
      ws.forEach((w, k) => {
        if (!need[k]) return;
        const Gk = { buf: gs[k]!.buffer, ld: Math.max(1, widths[k]!) };
        gws[k] = linearGradWeight(w, { M, nIn, nOut: widths[k]! }, Gk, X);
      });
    return [gx, ...gws];
  });
  return ys;
}
