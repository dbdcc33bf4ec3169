/*
 * Causal depthwise conv1d over time (docs/model.md §3.2), no activation:
 *   y[b,t,c] = bias[c] + Σ_{k=0..K−1} w[c,k] · in[b, t−K+1+k, c]
 * where in[b,τ,c] = x[b,τ,c] for τ ≥ 0 and, for τ < 0, the optional initial conv state
 * init[b, c, K−1+τ] (the previous K−1 inputs, oldest first), else 0.
 * Shapes: x [B,T,C], weight [C,1,K] (or [C,K]), bias [C], init [B,C,K−1] → y [B,T,C].
 * Backward: gx[τ] = Σ_k w[c,k]·gy[τ+K−1−k], gw[c,k] = Σ_{b,t} gy[t]·in[t−K+1+k], gbias = Σ gy.
 * Loops run over t then k with the channel axis innermost (contiguous); the weight is first
 * transposed to [K,C] for the same reason. A registered native kernel (native/ssm.c `convFwd`,
 * `convBwd`) takes over the raw-array functions; these loops stay as fallback and reference.
 * Packed documents (`seqIdx`, @loop/tensor's packed-documents.ts): a row reads only inputs of its
 * own document, taps τ ≥ `firstTap` (the initial state only when no document starts in [0, t]);
 * the backward leaves out the same terms.
 */
import { shapeStr, type Tensor } from "@loop/tensor";
import {
  allocF32,
  allocF32Uninit,
  documentResets,
  kernelSet,
  optionalArg,
  record1,
} from "@loop/tensor/kernel";

/** Sizes of a depthwise causal conv1d: batch, length, channels and kernel width K. */
export interface ConvShape {
  batch: number;
  seqLen: number;
  channels: number;
  width: number;
}

/** native/ssm.c convFwd(B, T, C, K, x, weight, bias, init, y[, resets]). */
export type ConvFwdNative = (
  B: number,
  T: number,
  C: number,
  K: number,
  x: Float32Array,
  weight: Float32Array,
  bias: Float32Array | null,
  init: Float32Array | null,
  y: Float32Array,
  ...resets: [] | [Float32Array]
) => void;

/** native/ssm.c convBwd(B, T, C, K, x, weight, init, gy, gx, gw, gbias, ginit[, resets]). */
export type ConvBwdNative = (
  B: number,
  T: number,
  C: number,
  K: number,
  x: Float32Array,
  weight: Float32Array,
  init: Float32Array | null,
  gy: Float32Array,
  gx: Float32Array | null,
  gw: Float32Array | null,
  gbias: Float32Array | null,
  ginit: Float32Array | null,
  ...resets: [] | [Float32Array]
) => void;

/**
 * The first tap τ that row t reads (packed documents): the latest document start s in
 * (t − K + 1, t] (resets [B·T] non-zero there), else t − K + 1 (every tap; the initial state too).
 */
export function firstTap(
  resets: Float32Array | null,
  rowOff: number,
  t: number,
  K: number,
): number {
  if (resets) {
    for (let s = t; s >= Math.max(t - K + 2, 0); s--) if (resets[rowOff + s] !== 0) return s;
  }
  return t - K + 1;
}

/** Weight [C,K] → [K,C]. */
function transposeWeight(w: Float32Array, C: number, K: number): Float32Array {
  const wt = new Float32Array(K * C);
  for (let c = 0; c < C; c++) for (let k = 0; k < K; k++) wt[k * C + c] = w[c * K + k]!;
  return wt;
}

/**
 * Forward on raw arrays; `init` [B,C,K−1] or null for zeros; `resets` [B·T] (documentResets) or
 * null for one document per row.
 */
export function causalConv1dForward(
  s: ConvShape,
  x: Float32Array,
  weight: Float32Array,
  bias: Float32Array | null,
  init: Float32Array | null,
  resets: Float32Array | null = null,
): Float32Array {
  const { batch, seqLen: T, channels: C, width: K } = s;
  const nat = kernelSet("ssm")?.convFwd;
  if (nat) {
    const y = allocF32Uninit(batch * T * C); // (the kernel writes every element)
    nat(batch, T, C, K, x, weight, bias, init, y, ...optionalArg(resets));
    return y;
  }
  const wt = transposeWeight(weight, C, K);
  const y = allocF32(batch * T * C);
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < T; t++) {
      const o = (b * T + t) * C;
      if (bias) y.set(bias, o);
      const first = firstTap(resets, b * T, t, K);
      for (let k = 0; k < K; k++) {
        const tau = t - K + 1 + k;
        const wo = k * C;
        if (tau < first) continue;
        if (tau >= 0) {
          const xo = (b * T + tau) * C;
          for (let c = 0; c < C; c++) y[o + c]! += wt[wo + c]! * x[xo + c]!;
        } else if (init) {
          const io = b * C * (K - 1) + K - 1 + tau;
          for (let c = 0; c < C; c++) y[o + c]! += wt[wo + c]! * init[io + c * (K - 1)]!;
        }
      }
    }
  }
  return y;
}

/**
 * Gradients of a causal conv1d (null where not asked for): input, weight, bias and initial history.
 */
export interface ConvGrads {
  x: Float32Array | null;
  weight: Float32Array | null;
  bias: Float32Array | null;
  init: Float32Array | null;
}

/** Backward on raw arrays; computes only the gradients asked for. */
export function causalConv1dBackward(
  s: ConvShape,
  x: Float32Array,
  weight: Float32Array,
  init: Float32Array | null,
  gy: Float32Array,
  needs: { x: boolean; weight: boolean; bias: boolean; init: boolean },
  resets: Float32Array | null = null,
): ConvGrads {
  const { batch, seqLen: T, channels: C, width: K } = s;
  const nat = kernelSet("ssm")?.convBwd;
  if (nat) {
    const g = {
      x: needs.x ? allocF32Uninit(batch * T * C) : null, // (the kernel writes every element)
      weight: needs.weight ? allocF32Uninit(C * K) : null,
      bias: needs.bias ? new Float32Array(C) : null,
      init: needs.init && init ? allocF32Uninit(batch * C * (K - 1)) : null,
    };
    nat(batch, T, C, K, x, weight, init, gy, g.x, g.weight, g.bias, g.init, ...optionalArg(resets));
    return g;
  }
  const wt = transposeWeight(weight, C, K);
  const gx = needs.x ? allocF32(batch * T * C) : null;
  const gwt = needs.weight ? new Float64Array(K * C) : null;
  const gb = needs.bias ? new Float64Array(C) : null;
  const gi = needs.init && init ? allocF32(batch * C * (K - 1)) : null;
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < T; t++) {
      const o = (b * T + t) * C;
      if (gb) for (let c = 0; c < C; c++) gb[c]! += gy[o + c]!;
      const first = firstTap(resets, b * T, t, K);
      for (let k = 0; k < K; k++) {
        const tau = t - K + 1 + k;
        const wo = k * C;
        if (tau < first) continue;
        if (tau >= 0) {
          const xo = (b * T + tau) * C;
          if (gx) for (let c = 0; c < C; c++) gx[xo + c]! += wt[wo + c]! * gy[o + c]!;
          if (gwt) for (let c = 0; c < C; c++) gwt[wo + c]! += gy[o + c]! * x[xo + c]!;
        } else if (init) {
          const io = b * C * (K - 1) + K - 1 + tau;
          if (gi) for (let c = 0; c < C; c++) gi[io + c * (K - 1)]! += wt[wo + c]! * gy[o + c]!;
          if (gwt) for (let c = 0; c < C; c++) gwt[wo + c]! += gy[o + c]! * init[io + c * (K - 1)]!;
        }
      }
    }
  }
  let gw: Float32Array | null = null;
  if (gwt) {
    gw = allocF32(C * K);
    for (let c = 0; c < C; c++) for (let k = 0; k < K; k++) gw[c * K + k] = gwt[k * C + c]!;
  }
  return { x: gx, weight: gw, bias: gb ? Float32Array.from(gb) : null, init: gi };
}

/**
 * The conv state after consuming x: the last K−1 inputs of (init ++ x) along time, [B,C,K−1],
 * oldest first — what the next prefill or recurrent step continues from.
 */
export function causalConv1dState(
  s: ConvShape,
  x: Float32Array,
  init: Float32Array | null,
): Float32Array {
  const { batch, seqLen: T, channels: C, width: K } = s;
  const out = new Float32Array(batch * C * (K - 1));
  for (let b = 0; b < batch; b++) {
    for (let j = 0; j < K - 1; j++) {
      const tau = T - (K - 1) + j;
      for (let c = 0; c < C; c++) {
        let v = 0;
        if (tau >= 0) v = x[(b * T + tau) * C + c]!;
        else if (init) v = init[b * C * (K - 1) + c * (K - 1) + K - 1 + tau]!;
        out[b * C * (K - 1) + c * (K - 1) + j] = v;
      }
    }
  }
  return out;
}

/** Validate the operands and return the conv sizes. */
export function convShape(x: Tensor, weight: Tensor, bias: Tensor | null, init?: Tensor | null) {
  if (x.rank !== 3) throw new Error(`causalConv1d: x must be [B,T,C], got ${shapeStr(x.shape)}`);
  const [batch, seqLen, channels] = x.shape as [number, number, number];
  const okW =
    (weight.rank === 3 && weight.shape[0] === channels && weight.shape[1] === 1) ||
    (weight.rank === 2 && weight.shape[0] === channels);
  if (!okW) {
    throw new Error(
      `causalConv1d: weight must be [${channels},1,K] (or [${channels},K]), got ${shapeStr(weight.shape)}`,
    );
  }
  const width = weight.shape[weight.rank - 1]!;
  if (width < 1) throw new Error(`causalConv1d: kernel width K must be ≥ 1, got ${width}`);
  if (bias && (bias.rank !== 1 || bias.size !== channels)) {
    throw new Error(`causalConv1d: bias must be [${channels}], got ${shapeStr(bias.shape)}`);
  }
  if (init) {
    const want = [batch, channels, width - 1];
    if (init.rank !== 3 || init.shape.some((d, i) => d !== want[i])) {
      throw new Error(
        `causalConv1d: initial state must be ${shapeStr(want)}, got ${shapeStr(init.shape)}`,
      );
    }
  }
  return { batch, seqLen, channels, width } satisfies ConvShape;
}

/**
 * Differentiable causal depthwise conv1d; gradients flow into x, weight, bias and init. With
 * `seqIdx` ([B·T] document index per position, mamba_ssm's seq_idx) no output mixes inputs of
 * two documents.
 */
export function causalConv1d(
  x: Tensor,
  weight: Tensor,
  bias: Tensor | null,
  initialState?: Tensor | null,
  seqIdx?: Int32Array | null,
): Tensor {
  const init = initialState ?? null;
  const s = convShape(x, weight, bias, init);
  const resets = seqIdx ? documentResets(seqIdx, s.batch, s.seqLen) : null;
  const y = causalConv1dForward(
    s,
    x.data,
    weight.data,
    bias?.data ?? null,
    init?.data ?? null,
    resets,
  );
  const inputs: Tensor[] = [x, weight];
  if (bias) inputs.push(bias);
  if (init) inputs.push(init);
  return record1("causalConv1d", inputs, y, x.shape, ([g], needs) => {
    const gr = causalConv1dBackward(
      s,
      x.data,
      weight.data,
      init?.data ?? null,
      g!,
      {
        x: needs[0]!,
        weight: needs[1]!,
        bias: bias ? needs[2]! : false,
        init: init ? needs[bias ? 3 : 2]! : false,
      },
      resets,
    );
    const out: (Float32Array | null)[] = [gr.x, gr.weight];
    if (bias) out.push(gr.bias);
    if (init) out.push(gr.init);
    return out;
  });
}
