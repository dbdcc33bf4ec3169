/*
 * `causalConv1dSiluSplit` on GPU tensors: the twin of @loop/ssm-kernels' op (same arguments,
 * shapes and gradients; kernels/conv-silu-split.ts). Each piece is written by its own dispatch,
 * straight from the conv (no pre-activation tensor, no split copies); the backward recomputes
 * the pre-activation.
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  CONV_GROUP,
  convGradBias,
  convGradInitKernel,
  convGradXWeightKernel,
  convSilu3GradPreBias,
  convSilu3GradPreKernel,
  convSilu3Kernel,
  convSiluGradPreKernel,
  convSiluPieceKernel,
} from "../kernels/conv-silu-split.js";
import { gradTarget, recordGpu } from "../tape.js";
import { columnRoleParams, columnSum, columnSumFinish, columnSumStart } from "./column-sum.js";
import { checkSeqIdx, placeholder } from "./optional-inputs.js";
import { shapeStr } from "./shape-str.js";

/** Differentiable silu(causal_conv1d(x)) split into pieces of `widths` channels. */
export function causalConv1dSiluSplit(
  x: GpuTensor,
  weight: GpuTensor,
  bias: GpuTensor | null,
  initialState: GpuTensor | null,
  widths: readonly number[],
  seqIdx: GpuTensor | null = null,
): GpuTensor[] {
  const op = "webgpu causalConv1dSiluSplit";
  if (x.rank !== 3) throw new Error(`${op}: x must be [B,T,C], got ${shapeStr(x.shape)}`);
  const [B, T, C] = x.shape as [number, number, number];
  const okW =
    (weight.rank === 3 && weight.shape[0] === C && weight.shape[1] === 1) ||
    (weight.rank === 2 && weight.shape[0] === C);
  if (!okW)
    throw new Error(
      `${op}: weight must be [${C},1,K] (or [${C},K]), got ${shapeStr(weight.shape)}`,
    );
  const K = weight.lastDim;
  if (K < 1) throw new Error(`${op}: kernel width K must be ≥ 1, got ${K}`);
  if (bias && (bias.rank !== 1 || bias.size !== C))
    throw new Error(`${op}: bias must be [${C}], got ${shapeStr(bias.shape)}`);
  const init = initialState;
  if (init && shapeStr(init.shape) !== shapeStr([B, C, K - 1]))
    throw new Error(
      `${op}: initial state must be ${shapeStr([B, C, K - 1])}, got ${shapeStr(init.shape)}`,
    );
  if (widths.reduce((a, b) => a + b, 0) !== C || widths.some((w) => !Number.isInteger(w) || w < 0))
    throw new Error(
      `${op}: widths [${widths.join(",")}] do not sum to the channels ${C} of ${shapeStr(x.shape)}`,
    );
  if (seqIdx) checkSeqIdx("causalConv1dSiluSplit", seqIdx, B, T);
  const ctx = x.ctx;
  const bufs = {
    x: x.buffer,
    weight: weight.buffer,
    bias: bias?.buffer ?? placeholder(ctx),
    init: init?.buffer ?? placeholder(ctx),
    seq: seqIdx?.buffer ?? placeholder(ctx),
  };
  const dims = { B, T, C, K, hasBias: bias ? 1 : 0, hasInit: init ? 1 : 0, hasSeq: seqIdx ? 1 : 0 };
  const rows = B * T;
  const offsets = widths.map((_, p) => widths.slice(0, p).reduce((a, b) => a + b, 0));
  // Three pieces (Mamba-2's x | B | C) in one dispatch each way; otherwise one per piece.
  const three = widths.length === 3;
  const o3 = { o1: offsets[1] ?? 0, o2: offsets[2] ?? 0 };
  const ys = widths.map((w) => emptyLike(ctx, [B, T, w]));
  if (three) {
    const n = rows * C;
    ctx.run(
      convSilu3Kernel,
      { ...bufs, y0: ys[0]!, y1: ys[1]!, y2: ys[2]! },
      { ...dims, ...o3, n },
      grid(n, CONV_GROUP),
    );
  } else
    widths.forEach((w, p) => {
      const n = rows * w;
      ctx.run(
        convSiluPieceKernel,
        { ...bufs, y: ys[p]! },
        { ...dims, off: offsets[p]!, w, n },
        grid(n, CONV_GROUP),
      );
    });
  const inputs: GpuTensor[] = [x, weight];
  if (bias) inputs.push(bias);
  if (init) inputs.push(init);
  recordGpu("causalConv1dSiluSplit", inputs, ys, (gys) => {
    const gpre = emptyLike(ctx, [B, T, C]);
    // With three pieces and a bias to train, ∂bias comes from the pass that writes ∂pre.
    let gbias: GpuTensor | null = null;
    if (three) {
      const n = rows * C;
      const gb = (p: number) => gys[p]?.buffer ?? placeholder(ctx);
      const hasG = gys.reduce((m, g, p) => (g ? m | (1 << p) : m), 0);
      const b3 = { ...bufs, g0: gb(0), g1: gb(1), g2: gb(2), gpre };
      if (bias?.requiresGrad)
        gbias = columnSum(
          ctx,
          convSilu3GradPreBias,
          b3,
          { ...dims, ...o3, hasG },
          rows,
          C,
          [C],
          gradTarget(bias),
        );
      else ctx.run(convSilu3GradPreKernel, b3, { ...dims, ...o3, n, hasG }, grid(n, CONV_GROUP));
    } else
      widths.forEach((w, p) => {
        const n = rows * w;
        const g = gys[p];
        ctx.run(
          convSiluGradPreKernel,
          { ...bufs, g: g ?? placeholder(ctx), gpre },
          { ...dims, off: offsets[p]!, w, n, hasG: g ? 1 : 0 },
          grid(n, CONV_GROUP),
        );
      });
    const taps = { weight: weight.buffer, gpre, seq: bufs.seq };
    const tapDims = { B, T, C, K, hasSeq: dims.hasSeq };
    // ∂x and the first stage of ∂w's column sum in one dispatch
    const gx = x.requiresGrad ? emptyLike(ctx, x.shape) : null;
    const wSum = weight.requiresGrad
      ? columnSumStart(ctx, rows, C * K, weight.shape, gradTarget(weight))
      : null;
    const xGroups = gx ? Math.ceil(x.size / CONV_GROUP) : 0;
    if (gx || wSum)
      ctx.run(
        convGradXWeightKernel,
        {
          ...taps,
          x: bufs.x,
          init: bufs.init,
          // unused writable slots get a buffer of their own (placeholder may be bound read-only)
          gx: gx ?? emptyLike(ctx, [1]),
          wpartial: wSum?.partial ?? emptyLike(ctx, [1]),
        },
        {
          ...dims,
          n: x.size,
          xGroups,
          wJobs: wSum?.jobs ?? 0,
          ...columnRoleParams(wSum, "w", C * K),
        },
        grid((xGroups + (wSum?.jobs ?? 0)) * CONV_GROUP, CONV_GROUP),
      );
    const gw = wSum ? columnSumFinish(wSum) : null;
    const out: (GpuTensor | null)[] = [gx, gw];
    if (bias)
      out.push(
        bias.requiresGrad
          ? (gbias ?? columnSum(ctx, convGradBias, { gpre }, {}, rows, C, [C], gradTarget(bias)))
          : null,
      );
    if (init) {
      let gi: GpuTensor | null = null;
      if (init.requiresGrad && init.size > 0) {
        gi = emptyLike(ctx, init.shape);
        ctx.run(
          convGradInitKernel,
          { ...taps, ginit: gi },
          { ...tapDims, n: init.size },
          grid(init.size, CONV_GROUP),
        );
      }
      out.push(gi);
    }
    return out;
  });
  return ys;
}
