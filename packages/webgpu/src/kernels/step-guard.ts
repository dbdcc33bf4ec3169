/**
 * The kernels that let a training step's update depend on its losses and gradient norm without
 * reading them back first (so the next step is queued while this one runs):
 *   guardFinite:   guard[0] ← 0 when one of values[0..n) is NaN or ±Inf (it stays 0 after)
 *   guardedAdamw:  optim.ts's adamw, done only while guard[0] ≠ 0 (the same arithmetic, so a
 *                  guarded step gives the bits of an unguarded one)
 */
import { defineKernel, flatEntry } from "../kernel-def.js";
import { OPTIM_GROUP } from "./optim.js";

export const guardFiniteKernel = defineKernel({
  name: "guard_finite",
  params: { n: "u32" },
  buffers: { values: "read", guard: "rw" },
  body: `@compute @workgroup_size(1)
fn main() {
  var ok = guard[0] != 0.0;
  for (var i = 0u; i < p.n; i++) {
    // Finite: the exponent bits are not all ones.
    if ((bitcast<u32>(values[i]) & 0x7f800000u) == 0x7f800000u) { ok = false; }
  }
  guard[0] = select(0.0, 1.0, ok);
}`,
});

export const guardedAdamwKernel = defineKernel({
  name: "adamw_guarded",
  params: { n: "u32", decay: "f32", stepSize: "f32", b1: "f32", b2: "f32", eps: "f32", sc2: "f32" },
  buffers: { w: "rw", g: "read", m: "rw", v: "rw", guard: "read" },
  body: `${flatEntry(OPTIM_GROUP)}
  if (guard[0] == 0.0) { return; }
  let gi = g[i];
  let mi = p.b1 * m[i] + (1.0 - p.b1) * gi;
  let vi = p.b2 * v[i] + (1.0 - p.b2) * gi * gi;
  m[i] = mi;
  v[i] = vi;
  w[i] = w[i] * p.decay - (p.stepSize * mi) / (sqrt(vi) * p.sc2 + p.eps);
}`,
});
