/*
 * Per-token choice among the loop steps' logits (docs/exit-gate.md "Inference"):
 *   selectLogits: y[m, :] = logits(z_m)[m, :]   for 1-based exit steps z [...S]
 *   exitAtStep:   logits(step) for every token (Ouro's exit_at_step)
 * Shapes: logits R × [...S, V], steps int [...S] → [...S, V]. selectLogits is a fused op whose
 * backward routes ∂y[m] to step z_m's logits (zero elsewhere).
 */
import type { IntTensor, Tensor } from "@loop/tensor";
import { allocF32, record1 } from "@loop/tensor/kernel";
import { checkPerStep, checkShape } from "./shapes.js";

/**
 * Each token's logits at its own exit step (`steps`, 1-based, same shape as the tokens): [… , V].
 */
export function selectLogits(logitsPerStep: readonly Tensor[], steps: IntTensor): Tensor {
  const op = "selectLogits";
  const s = checkPerStep(logitsPerStep, "logitsPerStep", op);
  checkShape(steps, s.slice(0, -1), "steps", op);
  const R = logitsPerStep.length;
  const V = s[s.length - 1]!;
  const M = steps.size;
  for (let m = 0; m < M; m++) {
    const z = steps.data[m]!;
    if (z < 1 || z > R) {
      throw new Error(`${op}: steps[${m}] is ${z}, expected a step in [1, ${R}]`);
    }
  }
  const y = allocF32(M * V);
  for (let m = 0; m < M; m++) {
    const src = logitsPerStep[steps.data[m]! - 1]!.data;
    y.set(src.subarray(m * V, m * V + V), m * V);
  }
  return record1(op, logitsPerStep, y, s, ([g], needs) =>
    logitsPerStep.map((_x, r) => {
      if (!needs[r]) return null;
      const gx = new Float32Array(M * V);
      for (let m = 0; m < M; m++) {
        if (steps.data[m] === r + 1) gx.set(g!.subarray(m * V, m * V + V), m * V);
      }
      return gx;
    }),
  );
}

/** The logits of loop step `step` (1-based) for every token: fixed-depth exit. */
export function exitAtStep(logitsPerStep: readonly Tensor[], step: number): Tensor {
  checkPerStep(logitsPerStep, "logitsPerStep", "exitAtStep");
  const R = logitsPerStep.length;
  if (!Number.isInteger(step) || step < 1 || step > R) {
    throw new Error(`exitAtStep: step must be an integer in [1, ${R}], got ${step}`);
  }
  return logitsPerStep[step - 1]!;
}
