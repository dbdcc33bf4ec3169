/*
 * The exit gate's logits (docs/exit-gate.md "Gate and exit distribution") written once against
 * a backend's kernels and the gate's weights by their §6 names (relative to the gate: "weight",
 * "bias"): a [R, ...S] from readouts R × [...S, D]. Every device model runs this.
 */
import { type GateKernels, gateLogitsOn } from "./gate-on.js";

/**
 * Gate logits through a backend's kernels, reading the gate's `weight` and `bias` by name
 * through `w`.
 */
export function exitGateLogits<T, I>(
  ops: GateKernels<T, I>,
  w: (name: string) => T,
  readouts: readonly T[],
): T {
  return gateLogitsOn(ops, readouts, w("weight"), w("bias"));
}
