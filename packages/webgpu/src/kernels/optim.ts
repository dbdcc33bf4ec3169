/**
 * Optimiser kernels (flat grids over one parameter's n elements):
 *   adamw:       m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
 *                w ← w·decay − stepSize·m / (sqrt(v)·sc2 + eps)
 *                (decay = 1 − lr·wd or 1, stepSize = lr/(1−β1^t), sc2 = 1/sqrt(1−β2^t): the
 *                constants of @loop/tensor's AdamW, computed on the CPU in double)
 *   normFinish:  norm[0] = sqrt(Σ_k parts[k]), k in order (parts: each gradient's Σ g²)
 *   clipScale:   g ← g·maxNorm/(norm + 1e-6) when norm is finite and > maxNorm, else unchanged
 */
import { defineKernel, flatEntry } from "../kernel-def.js";

export const OPTIM_GROUP = 256;
const head = flatEntry(OPTIM_GROUP);

export const adamwKernel = defineKernel({
  name: "adamw",
  params: { n: "u32", decay: "f32", stepSize: "f32", b1: "f32", b2: "f32", eps: "f32", sc2: "f32" },
  buffers: { w: "rw", g: "read", m: "rw", v: "rw" },
  body: `${head}
  let gi = g[i];
  let mi = p.b1 * m[i] + (1.0 - p.b1) * gi;
  let vi = p.b2 * v[i] + (1.0 - p.b2) * gi * gi;
  m[i] = mi;
  v[i] = vi;
  w[i] = w[i] * p.decay - (p.stepSize * mi) / (sqrt(vi) * p.sc2 + p.eps);
}`,
});

export const normFinishKernel = defineKernel({
  name: "norm_finish",
  params: { count: "u32" },
  buffers: { parts: "read", norm: "rw" },
  body: `@compute @workgroup_size(1)
fn main() {
  var s = 0.0;
  for (var k = 0u; k < p.count; k++) { s += parts[k]; }
  norm[0] = sqrt(s);
}`,
});

export const clipScaleKernel = defineKernel({
  name: "clip_scale",
  params: { n: "u32", maxNorm: "f32" },
  buffers: { norm: "read", g: "rw" },
  body: `${head}
  let nrm = norm[0];
  // Finite: the exponent bits are not all ones (NaN and ±Inf leave the gradients unscaled).
  let finite = (bitcast<u32>(nrm) & 0x7f800000u) != 0x7f800000u;
  if (finite && nrm > p.maxNorm) { g[i] = g[i] * (p.maxNorm / (nrm + 1e-6)); }
}`,
});
