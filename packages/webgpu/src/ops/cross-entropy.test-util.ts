/**
 * Test support for the cross-entropy tests: mean cross-entropy on the device as it is written
 * above the backends (ceRows, then maskedMean), so the op tests check the composition the trainer
 * really runs, and the oracle inputs of a case, with ignored targets among them.
 */
import { IGNORE_INDEX } from "@loop/tensor";
import type { OracleInput } from "@loop/test-support-gpu";
import type { GpuTensor } from "../gpu-tensor.js";
import { crossEntropyPerToken } from "./cross-entropy.js";
import { maskedMean } from "./masked-mean.js";

export const meanCrossEntropy = (logits: GpuTensor, targets: GpuTensor): GpuTensor =>
  maskedMean(crossEntropyPerToken(logits, targets), targets);

/** Targets in [0, V) with every third one ignored. */
export function targetsWithIgnored(n: number, V: number): Int32Array {
  return Int32Array.from({ length: n }, (_, i) => (i % 3 === 1 ? IGNORE_INDEX : (i * 7) % V));
}

/** A case's oracle inputs: logits [B,T,V] in [−4, 4], and `targets` (some ignored by default). */
export function ceInputs(
  B: number,
  T: number,
  V: number,
  targets = targetsWithIgnored(B * T, V),
): OracleInput[] {
  return [
    { shape: [B, T, V], range: [-4, 4] },
    { shape: [B, T], ints: targets },
  ];
}
