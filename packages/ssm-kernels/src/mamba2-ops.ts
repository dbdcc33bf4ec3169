/*
 * Two small fused ops of the Mamba-2 mixer (docs/model.md §3.4, §3.5):
 *   softplusBias: dt[..., h] = clamp(softplus(raw[..., h] + bias[h]), lo, hi)  (exact, stable
 *       softplus; the clamp is Hugging Face's and mamba_ssm's time_step_limit, [0, ∞) by default)
 *       ∂raw = g·σ(raw + bias)·[lo ≤ softplus(raw + bias) ≤ hi],  ∂bias = Σ ∂raw
 *       (zero outside the limits, as torch.clamp's gradient; the limits compared in float32)
 *   addDSkip:     out[..., h, p] = y[..., h, p] + D[h]·x[..., h, p]
 *       ∂y = g,  ∂x = D[h]·g,  ∂D[h] = Σ g ⊙ x
 * Shapes: raw [..., H], bias [H]; y and x [..., H, P], D [H].
 * Registered native kernels (native/ssm.c `softplusFwd`, `softplusBwd`, `dskipFwd`, `dskipBwd`)
 * take over the loops; the loops stay as fallback and reference.
 */
import { sameShape, shapeStr, type Tensor } from "@loop/tensor";
import {
  allocF32,
  allocF32Uninit,
  kernelSet,
  record1,
  sigmoidScalar,
  softplusScalar,
} from "@loop/tensor/kernel";
import { dtLimited, NO_DT_LIMIT } from "./mamba2-config.js";

/** native/ssm.c softplusFwd(raw, bias, y, rows, H, lo, hi). */
export type SoftplusFwdNative = (
  raw: Float32Array,
  bias: Float32Array,
  y: Float32Array,
  rows: number,
  H: number,
  lo: number,
  hi: number,
) => void;
/** native/ssm.c softplusBwd(raw, bias, gy, graw, gbias, rows, H, lo, hi). */
export type SoftplusBwdNative = (
  raw: Float32Array,
  bias: Float32Array,
  gy: Float32Array,
  graw: Float32Array | null,
  gbias: Float32Array | null,
  rows: number,
  H: number,
  lo: number,
  hi: number,
) => void;
/** native/ssm.c dskipFwd(y, x, D, out, rows, H, P). */
export type DskipFwdNative = (
  y: Float32Array,
  x: Float32Array,
  d: Float32Array,
  out: Float32Array,
  rows: number,
  H: number,
  P: number,
) => void;
/** native/ssm.c dskipBwd(x, D, gy, gx, gD, rows, H, P). */
export type DskipBwdNative = (
  x: Float32Array,
  d: Float32Array,
  gy: Float32Array,
  gx: Float32Array | null,
  gd: Float32Array | null,
  rows: number,
  H: number,
  P: number,
) => void;

/**
 * dt = clamp(softplus(raw + bias), lo, hi) (see the header); `limit` [lo, hi], absent or null
 * for none (the softplus alone).
 */
export function softplusBias(
  raw: Tensor,
  bias: Tensor,
  limit: readonly [number, number] | null = null,
): Tensor {
  const H = raw.lastDim;
  if (bias.rank !== 1 || bias.size !== H) {
    throw new Error(`softplusBias: bias must be [${H}], got ${shapeStr(bias.shape)}`);
  }
  if (limit && !(limit[0] <= limit[1])) {
    throw new Error(`softplusBias: limit must be [lo, hi] with lo ≤ hi, got [${limit.join(", ")}]`);
  }
  const clamped = dtLimited(limit);
  const [lo, hi] = clamped ? [Math.fround(limit![0]), Math.fround(limit![1])] : NO_DT_LIMIT;
  const n = raw.size;
  const rows = n / H;
  const rd = raw.data;
  const bd = bias.data;
  const nat = kernelSet("ssm")?.softplusFwd;
  // (the native kernels write every element of their outputs: no zero fill)
  const y = nat ? allocF32Uninit(n) : allocF32(n);
  if (nat) nat(rd, bd, y, rows, H, lo, hi);
  else {
    for (let r = 0, o = 0; r < rows; r++, o += H) {
      for (let h = 0; h < H; h++) y[o + h] = softplusScalar(rd[o + h]! + bd[h]!);
    }
    if (clamped) for (let i = 0; i < n; i++) y[i] = clampTo(y[i]!, lo, hi);
  }
  return record1("softplusBias", [raw, bias], y, raw.shape, ([g], needs) => {
    const gy = g!;
    const natB = kernelSet("ssm")?.softplusBwd;
    if (natB) {
      const gr = needs[0] ? allocF32Uninit(n) : null;
      const gb = needs[1] ? new Float32Array(H) : null;
      natB(rd, bd, gy, gr, gb, rows, H, lo, hi);
      return [gr, gb];
    }
    const gr = allocF32(n);
    const gb = needs[1] ? new Float64Array(H) : null;
    for (let r = 0, o = 0; r < rows; r++, o += H) {
      for (let h = 0; h < H; h++) {
        const a = rd[o + h]! + bd[h]!;
        const v = inLimit(a, clamped, lo, hi) ? gy[o + h]! * sigmoidScalar(a) : 0;
        gr[o + h] = v;
        if (gb) gb[h]! += v;
      }
    }
    return [needs[0] ? gr : null, gb ? Float32Array.from(gb) : null];
  });
}

/** v clamped to [lo, hi] (NaN stays NaN). */
function clampTo(v: number, lo: number, hi: number): number {
  return Math.min(Math.max(v, lo), hi);
}

/** Whether softplus(a), rounded to float32, lies within [lo, hi] (always without a limit). */
function inLimit(a: number, clamped: boolean, lo: number, hi: number): boolean {
  if (!clamped) return true;
  const s = Math.fround(softplusScalar(a));
  return s >= lo && s <= hi;
}

/** y + D_h · x for y and x [..., H, P] and D [H]: Mamba-2's skip term; differentiable. */
export function addDSkip(y: Tensor, x: Tensor, d: Tensor): Tensor {
  if (!sameShape(y.shape, x.shape) || y.rank < 2) {
    throw new Error(
      `addDSkip: y and x must share a shape [..., H, P], got ${shapeStr(y.shape)} and ${shapeStr(x.shape)}`,
    );
  }
  const H = y.shape[y.rank - 2]!;
  const P = y.lastDim;
  if (d.rank !== 1 || d.size !== H) {
    throw new Error(`addDSkip: D must be [${H}], got ${shapeStr(d.shape)}`);
  }
  const n = y.size;
  const rows = n / (H * P);
  const yd = y.data;
  const xd = x.data;
  const dd = d.data;
  const nat = kernelSet("ssm")?.dskipFwd;
  const out = allocF32Uninit(n);
  if (nat) nat(yd, xd, dd, out, rows, H, P);
  else {
    out.set(yd);
    dskipForward(out, xd, dd, P);
  }
  return record1("addDSkip", [y, x, d], out, y.shape, ([g], needs) => {
    const gy = g!;
    let gx: Float32Array | null = null;
    let gd: Float32Array | null = null;
    const natB = kernelSet("ssm")?.dskipBwd;
    if (natB) {
      gx = needs[1] ? allocF32Uninit(n) : null;
      gd = needs[2] ? new Float32Array(H) : null;
      if (gx || gd) natB(xd, dd, gy, gx, gd, rows, H, P);
    } else if (needs[1] || needs[2]) {
      gx = needs[1] ? allocF32(n) : null;
      gd = dskipBackward(gx, gy, xd, dd, P, needs[2]);
    }
    // ∂y = g itself: the engine shares a returned array between slots (copy on write,
    // autograd/grad-store.ts), so the pass-through needs no copy.
    return [needs[0] ? gy : null, gx, gd];
  });
}

/**
 * The D skip on raw arrays x, y [rows, H, P] (the portable loops of addDSkip and of the scan's
 * fused D skip): y += D_h·x in place.
 */
export function dskipForward(y: Float32Array, x: Float32Array, D: Float32Array, P: number): void {
  const H = D.length;
  for (let o = 0; o < y.length; ) {
    for (let h = 0; h < H; h++, o += P) {
      const dh = D[h]!;
      for (let p = 0; p < P; p++) y[o + p] = y[o + p]! + dh * x[o + p]!;
    }
  }
}

/**
 * Its backward: gx += D_h·gy (gx null: skipped); returns ∂D_h = Σ gy ⊙ x (per row and head in
 * double, then over rows), or null without `wantD`.
 */
export function dskipBackward(
  gx: Float32Array | null,
  gy: Float32Array,
  x: Float32Array,
  D: Float32Array,
  P: number,
  wantD = true,
): Float32Array | null {
  const H = D.length;
  const acc = wantD ? new Float64Array(H) : null;
  for (let o = 0; o < gy.length; ) {
    for (let h = 0; h < H; h++, o += P) {
      const dh = D[h]!;
      if (gx) for (let p = 0; p < P; p++) gx[o + p] = gx[o + p]! + dh * gy[o + p]!;
      if (acc) {
        let s = 0;
        for (let p = 0; p < P; p++) s += gy[o + p]! * x[o + p]!;
        acc[h]! += s;
      }
    }
  }
  return acc ? Float32Array.from(acc) : null;
}
