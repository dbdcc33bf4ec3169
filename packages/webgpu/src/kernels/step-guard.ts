/*
 * The kernels that let a training step's update depend on its losses and gradient norm without
 * reading them back first (so the next step is queued while this one runs):
 *   guardFinite:   guard[0] ← 0 when one of values[0..n) is NaN or ±Inf (it stays 0 after)
 *   guardedAdamw:  optim.ts's adamw (its clipping included), done only while guard[0] ≠ 0 (the
 *                  same arithmetic, so a guarded step gives the bits of an unguarded one)
 */
import { defineKernel } from "../kernel-def.js";
import { ADAMW_BUFFERS, ADAMW_PARAMS, adamwBody } from "./optim.js";

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
  params: ADAMW_PARAMS,
  buffers: { ...ADAMW_BUFFERS, guard: "read" },
  body: adamwBody("if (guard[0] == 0.0) { return; }"),
});
