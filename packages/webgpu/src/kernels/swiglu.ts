/*
 * SwiGLU gate (docs/model.md §5), elementwise over n values, as @loop/attention's `swiglu`:
 *   y = silu(gate) ⊙ up = gate·σ(gate)·up
 *   ∂gate = G ⊙ up ⊙ σ(gate)·(1 + gate·(1 − σ(gate))),  ∂up = G ⊙ gate·σ(gate)
 * gate, up, y, G, ∂gate, ∂up are flat [n]; σ is recomputed in the backward (nothing is saved).
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { WGSL_MATH } from "./wgsl-math.js";

export const SWIGLU_GROUP = 256;
const head = `${WGSL_MATH}
${flatEntry(SWIGLU_GROUP)}
  let x = gate[i];
  let s = sigmoid(x);`;

export const swigluForwardKernel = defineKernel({
  name: "swiglu/forward",
  params: { n: "u32" },
  buffers: { gate: "read", up: "read", y: "rw" },
  body: `${head}\n  y[i] = x * s * up[i];\n}`,
});

export const swigluBackwardKernel = defineKernel({
  name: "swiglu/backward",
  params: { n: "u32" },
  buffers: { gate: "read", up: "read", gy: "read", dgate: "rw", dup: "rw" },
  body: `${head}
  let g = gy[i];
  dgate[i] = g * up[i] * s * (1.0 + x * (1.0 - s));
  dup[i] = g * x * s;
}`,
});
