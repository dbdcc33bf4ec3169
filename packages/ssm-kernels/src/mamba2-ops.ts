/**
 * Two small fused ops of the Mamba-2 mixer (model.md §3.4, §3.5):
 *   softplusBias: dt[..., h] = softplus(raw[..., h] + bias[h])  (exact, stable softplus)
 *       ∂raw = g·σ(raw + bias),  ∂bias = Σ ∂raw
 *   addDSkip:     out[..., h, p] = y[..., h, p] + D[h]·x[..., h, p]
 *       ∂y = g,  ∂x = D[h]·g,  ∂D[h] = Σ g ⊙ x
 * Shapes: raw [..., H], bias [H]; y and x [..., H, P], D [H].
 * Registered native kernels (native/ssm.c `softplusFwd`, `softplusBwd`, `dskipFwd`, `dskipBwd`)
 * take over the loops; the loops stay as fallback and reference.
 */
import {
  allocF32,
  allocF32Uninit,
  nativeKernel,
  record1,
  sameShape,
  shapeStr,
  sigmoidScalar,
  softplusScalar,
  type Tensor,
} from "@loop/tensor";

/** native/ssm.c softplusFwd(raw, bias, y, rows, H). */
type SoftplusFwdNative = (
  raw: Float32Array,
  bias: Float32Array,
  y: Float32Array,
  rows: number,
  H: number,
) => void;
/** native/ssm.c softplusBwd(raw, bias, gy, graw, gbias, rows, H). */
type SoftplusBwdNative = (
  raw: Float32Array,
  bias: Float32Array,
  gy: Float32Array,
  graw: Float32Array | null,
  gbias: Float32Array | null,
  rows: number,
  H: number,
) => void;
/** native/ssm.c dskipFwd(y, x, D, out, rows, H, P). */
type DskipFwdNative = (
  y: Float32Array,
  x: Float32Array,
  d: Float32Array,
  out: Float32Array,
  rows: number,
  H: number,
  P: number,
) => void;
/** native/ssm.c dskipBwd(x, D, gy, gx, gD, rows, H, P). */
type DskipBwdNative = (
  x: Float32Array,
  d: Float32Array,
  gy: Float32Array,
  gx: Float32Array | null,
  gd: Float32Array | null,
  rows: number,
  H: number,
  P: number,
) => void;

export function softplusBias(raw: Tensor, bias: Tensor): Tensor {
  const H = raw.lastDim;
  if (bias.rank !== 1 || bias.size !== H) {
    throw new Error(`softplusBias: bias must be [${H}], got ${shapeStr(bias.shape)}`);
  }
  const n = raw.size;
  const rows = n / H;
  const rd = raw.data;
  const bd = bias.data;
  const nat = nativeKernel<SoftplusFwdNative>("ssm/softplusFwd");
  // (the native kernels write every element of their outputs: no zero fill)
  const y = nat ? allocF32Uninit(n) : allocF32(n);
  if (nat) nat(rd, bd, y, rows, H);
  else {
    for (let r = 0, o = 0; r < rows; r++, o += H) {
      for (let h = 0; h < H; h++) y[o + h] = softplusScalar(rd[o + h]! + bd[h]!);
    }
  }
  return record1("softplusBias", [raw, bias], y, raw.shape, ([g], needs) => {
    const gy = g!;
    const natB = nativeKernel<SoftplusBwdNative>("ssm/softplusBwd");
    if (natB) {
      const gr = needs[0] ? allocF32Uninit(n) : null;
      const gb = needs[1] ? new Float32Array(H) : null;
      natB(rd, bd, gy, gr, gb, rows, H);
      return [gr, gb];
    }
    const gr = allocF32(n);
    const gb = needs[1] ? new Float64Array(H) : null;
    for (let r = 0, o = 0; r < rows; r++, o += H) {
      for (let h = 0; h < H; h++) {
        const v = gy[o + h]! * sigmoidScalar(rd[o + h]! + bd[h]!);
        gr[o + h] = v;
        if (gb) gb[h]! += v;
      }
    }
    return [needs[0] ? gr : null, gb ? Float32Array.from(gb) : null];
  });
}

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
  const nat = nativeKernel<DskipFwdNative>("ssm/dskipFwd");
  const out = nat ? allocF32Uninit(n) : allocF32(n);
  if (nat) nat(yd, xd, dd, out, rows, H, P);
  else {
    for (let r = 0, o = 0; r < rows; r++) {
      for (let h = 0; h < H; h++, o += P) {
        const dh = dd[h]!;
        for (let p = 0; p < P; p++) out[o + p] = yd[o + p]! + dh * xd[o + p]!;
      }
    }
  }
  return record1("addDSkip", [y, x, d], out, y.shape, ([g], needs) => {
    const gy = g!;
    let gx: Float32Array | null = null;
    let gd: Float32Array | null = null;
    const natB = nativeKernel<DskipBwdNative>("ssm/dskipBwd");
    if (natB) {
      gx = needs[1] ? allocF32Uninit(n) : null;
      gd = needs[2] ? new Float32Array(H) : null;
      if (gx || gd) natB(xd, dd, gy, gx, gd, rows, H, P);
    } else if (needs[1]) {
      gx = allocF32(n);
      for (let r = 0, o = 0; r < rows; r++) {
        for (let h = 0; h < H; h++, o += P) {
          const dh = dd[h]!;
          for (let p = 0; p < P; p++) gx[o + p] = dh * gy[o + p]!;
        }
      }
    }
    if (needs[2] && !natB) {
      const acc = new Float64Array(H);
      for (let r = 0, o = 0; r < rows; r++) {
        for (let h = 0; h < H; h++, o += P) {
          let s = 0;
          for (let p = 0; p < P; p++) s += gy[o + p]! * xd[o + p]!;
          acc[h]! += s;
        }
      }
      gd = Float32Array.from(acc);
    }
    // ∂y = g itself: the engine shares a returned array between slots (copy on write,
    // autograd/grad-store.ts), so the pass-through needs no copy.
    return [needs[0] ? gy : null, gx, gd];
  });
}
