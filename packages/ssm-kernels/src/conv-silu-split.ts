/*
 * Causal depthwise conv1d, silu and a split of the channel axis as one op (docs/model.md §3.2–3.3:
 * xBC = silu(conv1d(xBC)) is then split into x, B, C):
 *   pre = causalConv1d(x, weight, bias, init),  y_p[b,t,j] = silu(pre[b,t,o_p + j]),
 *   o_p = Σ_{q<p} w_p.
 * Backward: ∂pre = g_p·σ(pre)·(1 + pre·(1 − σ(pre))) piece by piece (0 for a piece without
 * gradient), then the conv1d backward on ∂pre.
 * Shapes: x [B,T,C], weight [C,1,K] (or [C,K]), bias [C], init [B,C,K−1], widths summing to C
 * → y_p [B,T,w_p].
 * With the native kernels (native/ssm.c `convSiluFwd`, `convSiluBwd`) neither pre nor ∂pre is
 * ever stored: the forward writes the pieces straight from each conv row, and the backward
 * recomputes pre block by block (one pass instead of conv, silu, split and their backwards).
 * Without them it is exactly `siluSplit(causalConv1d(…), widths)`. `seqIdx`: packed documents,
 * as causalConv1d.
 */
import { shapeStr, siluSplit, type Tensor } from "@loop/tensor";
import {
  allocF32Uninit,
  documentResets,
  kernelSet,
  optionalArg,
  record,
} from "@loop/tensor/kernel";
import { causalConv1d, convShape } from "./causal-conv1d.js";

/** The most pieces the native kernels take (more fall back to the composition). */
const MAX_PIECES = 4;

type F = Float32Array;
type N = Float32Array | null;

/**
 * native/ssm.c convSiluFwd(B, T, C, K, x, weight, bias, init, np, w0..w3, y0..y3) and
 * convSiluBwd(B, T, C, K, x, weight, bias, init, np, w0..w3, g0..g3, gx, gw, gbias, ginit):
 * np pieces, widths and arrays padded to four with 0 and null.
 */
export type ConvSiluNative = (
  B: number,
  T: number,
  C: number,
  K: number,
  x: F,
  weight: F,
  bias: N,
  init: N,
  np: number,
  ...piecesAndArrays: (number | N)[]
) => void;

/** widths padded to MAX_PIECES with zeros, arrays with nulls */
function padded<T>(items: readonly T[], fill: T): T[] {
  return [...items, ...Array<T>(MAX_PIECES - items.length).fill(fill)];
}

/** Differentiable silu(causal_conv1d(x)) split into pieces of `widths` channels. */
export function causalConv1dSiluSplit(
  x: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  initialState: Tensor | null,
  widths: readonly number[],
  seqIdx: Int32Array | null = null,
): Tensor[] {
  const init = initialState ?? null;
  const s = convShape(x, weight, bias, init);
  const { batch: B, seqLen: T, channels: C, width: K } = s;
  const total = widths.reduce((a, b) => a + b, 0);
  if (total !== C || widths.some((w) => !Number.isInteger(w) || w < 0)) {
    throw new Error(
      `causalConv1dSiluSplit: widths [${widths.join(",")}] do not sum to the channels ${C} of ${shapeStr(x.shape)}`,
    );
  }
  const fwd = kernelSet("ssm")?.convSiluFwd;
  const bwd = kernelSet("ssm")?.convSiluBwd;
  if (!fwd || !bwd || widths.length === 0 || widths.length > MAX_PIECES) {
    return siluSplit(causalConv1d(x, weight, bias, init, seqIdx), widths);
  }
  const resets = optionalArg(seqIdx ? documentResets(seqIdx, B, T) : null);
  const rows = B * T;
  const ws = padded(widths, 0);
  const ys = widths.map((w) => allocF32Uninit(rows * w)); // (every element is written)
  // The arguments both kernels begin with.
  const head: Parameters<ConvSiluNative> = [
    B,
    T,
    C,
    K,
    x.data,
    weight.data,
    bias?.data ?? null,
    init?.data ?? null,
    widths.length,
    ...ws,
  ];
  fwd(...head, ...padded<N>(ys, null), ...resets);
  const inputs: Tensor[] = [x, weight];
  if (bias) inputs.push(bias);
  if (init) inputs.push(init);
  const outs = ys.map((data, p) => ({ data, shape: [B, T, widths[p]!] }));
  return record("causalConv1dSiluSplit", inputs, outs, (gys, needs) => {
    const needInit = init ? needs[bias ? 3 : 2]! : false;
    const g = {
      x: needs[0] ? allocF32Uninit(rows * C) : null, // (the kernel writes every element)
      weight: needs[1] ? allocF32Uninit(C * K) : null,
      bias: bias && needs[2] ? allocF32Uninit(C) : null,
      init: needInit ? allocF32Uninit(B * C * (K - 1)) : null,
    };
    bwd(...head, ...padded<N>(gys, null), g.x, g.weight, g.bias, g.init, ...resets);
    const out: N[] = [g.x, g.weight];
    if (bias) out.push(g.bias);
    if (init) out.push(g.init);
    return out;
  });
}
