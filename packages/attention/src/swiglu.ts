/*
 * Fused SwiGLU gate (docs/model.md §5): y = silu(gate) ⊙ up, silu(x) = x·σ(x).
 *   gate, up [..., F] (same shape) → y [..., F]
 *   ∂gate = G ⊙ up ⊙ σ(gate)·(1 + gate·(1 − σ(gate))),  ∂up = G ⊙ silu(gate)
 * Nothing is saved beyond the inputs: σ is recomputed in the backward. Registered native
 * kernels (native/attention.c `swigluFwd`, `swigluBwd`) take over the loops, which stay as
 * fallback and reference.
 */
import { sameShape, shapeStr, type Tensor } from "@loop/tensor";
import { allocF32Uninit, kernelSet, record1, sigmoidScalar } from "@loop/tensor/kernel";

/** native/attention.c swigluFwd(gate, up, y, n). */
export type SwigluFwdNative = (
  g: Float32Array,
  u: Float32Array,
  y: Float32Array,
  n: number,
) => void;
/** native/attention.c swigluBwd(gate, up, gy, dgate|null, dup|null, n). */
export type SwigluBwdNative = (
  g: Float32Array,
  u: Float32Array,
  gy: Float32Array,
  dg: Float32Array | null,
  du: Float32Array | null,
  n: number,
) => void;

/** silu(gate) ⊙ up, elementwise, for two tensors of the same shape (differentiable). */
export function swiglu(gate: Tensor, up: Tensor): Tensor {
  if (!sameShape(gate.shape, up.shape)) {
    throw new Error(
      `swiglu: gate ${shapeStr(gate.shape)} and up ${shapeStr(up.shape)} must have the same shape`,
    );
  }
  const n = gate.size;
  const g = gate.data;
  const u = up.data;
  const y = allocF32Uninit(n); // both paths write every element (and every gradient asked for)
  const natF = kernelSet("attention")?.swigluFwd;
  if (natF) natF(g, u, y, n);
  else for (let i = 0; i < n; i++) y[i] = g[i]! * sigmoidScalar(g[i]!) * u[i]!;
  return record1("swiglu", [gate, up], y, gate.shape, ([gy], needs) => {
    const G = gy!;
    const dg = needs[0] ? allocF32Uninit(n) : null;
    const du = needs[1] ? allocF32Uninit(n) : null;
    const natB = kernelSet("attention")?.swigluBwd;
    if (natB) {
      natB(g, u, G, dg, du, n);
      return [dg, du];
    }
    for (let i = 0; i < n; i++) {
      const x = g[i]!;
      const s = sigmoidScalar(x);
      if (dg) dg[i] = G[i]! * u[i]! * s * (1 + x * (1 - s));
      if (du) du[i] = G[i]! * x * s;
    }
    return [dg, du];
  });
}
