/**
 * Two small fused ops of the Mamba-2 mixer (model.md §3.4, §3.5):
 *   softplusBias: dt[..., h] = softplus(raw[..., h] + bias[h])  (exact, stable softplus)
 *       ∂raw = g·σ(raw + bias),  ∂bias = Σ ∂raw
 *   addDSkip:     out[..., h, p] = y[..., h, p] + D[h]·x[..., h, p]
 *       ∂y = g,  ∂x = D[h]·g,  ∂D[h] = Σ g ⊙ x
 * Shapes: raw [..., H], bias [H]; y and x [..., H, P], D [H].
 */
import {
  allocF32,
  record1,
  sameShape,
  shapeStr,
  sigmoidScalar,
  softplusScalar,
  type Tensor,
} from "@loop/tensor";

export function softplusBias(raw: Tensor, bias: Tensor): Tensor {
  const H = raw.lastDim;
  if (bias.rank !== 1 || bias.size !== H) {
    throw new Error(`softplusBias: bias must be [${H}], got ${shapeStr(bias.shape)}`);
  }
  const n = raw.size;
  const y = allocF32(n);
  for (let i = 0; i < n; i++) y[i] = softplusScalar(raw.data[i]! + bias.data[i % H]!);
  return record1("softplusBias", [raw, bias], y, raw.shape, ([g], needs) => {
    const gr = allocF32(n);
    const gb = needs[1] ? new Float64Array(H) : null;
    for (let i = 0; i < n; i++) {
      const v = g![i]! * sigmoidScalar(raw.data[i]! + bias.data[i % H]!);
      gr[i] = v;
      if (gb) gb[i % H]! += v;
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
  const out = allocF32(n);
  for (let i = 0; i < n; i++) out[i] = y.data[i]! + d.data[Math.floor(i / P) % H]! * x.data[i]!;
  return record1("addDSkip", [y, x, d], out, y.shape, ([g], needs) => {
    const gy = g!;
    let gx: Float32Array | null = null;
    let gd: Float32Array | null = null;
    if (needs[1]) {
      gx = allocF32(n);
      for (let i = 0; i < n; i++) gx[i] = d.data[Math.floor(i / P) % H]! * gy[i]!;
    }
    if (needs[2]) {
      const acc = new Float64Array(H);
      for (let i = 0; i < n; i++) acc[Math.floor(i / P) % H]! += gy[i]! * x.data[i]!;
      gd = Float32Array.from(acc);
    }
    return [needs[0] ? Float32Array.from(gy) : null, gx, gd];
  });
}
