/*
 * The exit gate's logits (docs/exit-gate.md "Gate and exit distribution") written once against
 * the backend ops (`ModelOps` of @loop/tensor) and its weights by their §6 names (relative to
 * the gate: "weight", "bias"): a [R, ...S] from readouts R × [...S, D]. `ExitGate.logits` and
 * every device model run this.
 */
import type { ExitGateOps } from "@loop/tensor";

/**
 * Gate logits through a backend's ops, reading the gate's `weight` and `bias` by name through `w`.
 */
export function exitGateLogits<T, I>(
  ops: Pick<ExitGateOps<T, I>, "gateLogits">,
  w: (name: string) => T,
  readouts: readonly T[],
): T {
  return ops.gateLogits(readouts, w("weight"), w("bias"));
}
