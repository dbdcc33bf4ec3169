/*
 * Gated grouped RMSNorm (docs/model.md §3.6):
 *   v = x ⊙ silu(z);  per row and per group of Di/G channels: r = 1/sqrt(mean(v_g²) + eps);
 *   y = v · r ⊙ weight
 * Shapes: x [..., Di], z [..., Di], weight [Di] → y [..., Di]; G must divide Di.
 * Backward, with ĝ = gy ⊙ weight and v̂ = v·r per group:
 *   ∂v = r·(ĝ − v̂·mean(ĝ ⊙ v̂)),  ∂x = ∂v ⊙ silu(z),  ∂z = ∂v ⊙ x ⊙ silu'(z),
 *   silu'(z) = σ(z)(1 + z(1 − σ(z))),  ∂weight = Σ_rows gy ⊙ v̂.
 * A registered native kernel (native/ssm.c `rmsnormFwd`, `rmsnormBwd`) takes over the raw-array
 * functions; these loops stay as fallback and reference.
 */
import { sameShape, shapeStr, type Tensor } from "@loop/tensor";
import { allocF32, allocF32Uninit, kernelSet, record1, sigmoidScalar } from "@loop/tensor/kernel";

/** native/ssm.c rmsnormFwd(x, z, weight, rows, Di, G, eps, rinv, y). */
export type RmsnormFwdNative = (
  x: Float32Array,
  z: Float32Array,
  weight: Float32Array,
  rows: number,
  Di: number,
  G: number,
  eps: number,
  rinv: Float32Array | null,
  y: Float32Array,
) => void;

/** native/ssm.c rmsnormBwd(x, z, weight, rows, Di, G, rinv, gy, gx, gz, gw). */
export type RmsnormBwdNative = (
  x: Float32Array,
  z: Float32Array,
  weight: Float32Array,
  rows: number,
  Di: number,
  G: number,
  rinv: Float32Array,
  gy: Float32Array,
  gx: Float32Array | null,
  gz: Float32Array | null,
  gw: Float32Array | null,
) => void;

/** Forward on raw arrays: `rows` rows of Di channels. Fills `rinv` [rows·G] when given. */
export function gatedRmsnormForward(
  x: Float32Array,
  z: Float32Array,
  weight: Float32Array,
  rows: number,
  Di: number,
  G: number,
  eps: number,
  rinv: Float32Array | null = null,
  out: Float32Array | null = null,
): Float32Array {
  const nat = kernelSet("ssm")?.rmsnormFwd;
  if (nat) {
    const y = out ?? allocF32Uninit(rows * Di); // (the kernel writes every element)
    nat(x, z, weight, rows, Di, G, eps, rinv, y);
    return y;
  }
  const y = out ?? allocF32(rows * Di);
  const gs = Di / G;
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < G; g++) {
      const o = r * Di + g * gs;
      let ss = 0;
      for (let j = 0; j < gs; j++) {
        const zv = z[o + j]!;
        const v = x[o + j]! * zv * sigmoidScalar(zv);
        y[o + j] = v;
        ss += v * v;
      }
      const ri = 1 / Math.sqrt(ss / gs + eps);
      if (rinv) rinv[r * G + g] = ri;
      for (let j = 0; j < gs; j++) y[o + j] = y[o + j]! * ri * weight[g * gs + j]!;
    }
  }
  return y;
}

/** Backward on raw arrays (recomputes v from x and z). */
export function gatedRmsnormBackward(
  x: Float32Array,
  z: Float32Array,
  weight: Float32Array,
  rows: number,
  Di: number,
  G: number,
  rinv: Float32Array,
  gy: Float32Array,
  needs: { x: boolean; z: boolean; weight: boolean },
): { x: Float32Array | null; z: Float32Array | null; weight: Float32Array | null } {
  const nat = kernelSet("ssm")?.rmsnormBwd;
  if (nat) {
    const g = {
      x: needs.x ? allocF32Uninit(rows * Di) : null, // (the kernel writes every element)
      z: needs.z ? allocF32Uninit(rows * Di) : null,
      weight: needs.weight ? new Float32Array(Di) : null,
    };
    nat(x, z, weight, rows, Di, G, rinv, gy, g.x, g.z, g.weight);
    return g;
  }
  const gs = Di / G;
  const gx = needs.x ? allocF32(rows * Di) : null;
  const gz = needs.z ? allocF32(rows * Di) : null;
  const gw = needs.weight ? new Float64Array(Di) : null;
  const vhat = new Float64Array(gs);
  const sig = new Float64Array(gs);
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < G; g++) {
      const o = r * Di + g * gs;
      const ri = rinv[r * G + g]!;
      let dot = 0;
      for (let j = 0; j < gs; j++) {
        const zv = z[o + j]!;
        const sg = sigmoidScalar(zv);
        sig[j] = sg;
        const vh = x[o + j]! * zv * sg * ri;
        vhat[j] = vh;
        const gyv = gy[o + j]!;
        dot += gyv * weight[g * gs + j]! * vh;
        if (gw) gw[g * gs + j]! += gyv * vh;
      }
      const m = dot / gs;
      if (!gx && !gz) continue;
      for (let j = 0; j < gs; j++) {
        const gv = ri * (gy[o + j]! * weight[g * gs + j]! - vhat[j]! * m);
        const zv = z[o + j]!;
        const sg = sig[j]!;
        if (gx) gx[o + j] = gv * zv * sg;
        if (gz) gz[o + j] = gv * x[o + j]! * sg * (1 + zv * (1 - sg));
      }
    }
  }
  return { x: gx, z: gz, weight: gw ? Float32Array.from(gw) : null };
}

/** Differentiable gated grouped RMSNorm. */
export function gatedRmsnorm(
  x: Tensor,
  z: Tensor,
  weight: Tensor,
  nGroups = 1,
  eps = 1e-5,
): Tensor {
  const Di = x.lastDim;
  if (!sameShape(x.shape, z.shape)) {
    throw new Error(
      `gatedRmsnorm: z must have the shape of x ${shapeStr(x.shape)}, got ${shapeStr(z.shape)}`,
    );
  }
  if (weight.rank !== 1 || weight.size !== Di) {
    throw new Error(`gatedRmsnorm: weight must be [${Di}], got ${shapeStr(weight.shape)}`);
  }
  if (!Number.isInteger(nGroups) || nGroups < 1 || Di % nGroups !== 0) {
    throw new Error(
      `gatedRmsnorm: nGroups must be a positive divisor of the channel count ${Di}, got ${nGroups}`,
    );
  }
  const rows = x.rows;
  const rinv = allocF32(rows * nGroups);
  const y = gatedRmsnormForward(x.data, z.data, weight.data, rows, Di, nGroups, eps, rinv);
  return record1("gatedRmsnorm", [x, z, weight], y, x.shape, ([g], needs) => {
    const gr = gatedRmsnormBackward(x.data, z.data, weight.data, rows, Di, nGroups, rinv, g!, {
      x: needs[0]!,
      z: needs[1]!,
      weight: needs[2]!,
    });
    return [gr.x, gr.z, gr.weight];
  });
}
