/** Helpers shared by this package's tests (not exported from the package). */
import { randn, randu } from "@loop/tensor/internal";
import type { ScanTensors } from "./ssd-scan-ref.js";

export { relErr } from "@loop/test-support";

/** Inputs of a scan test. */
export type ScanInputs = ScanTensors;

/** Random scan inputs: dt ∈ [0.01, 0.5], A ∈ [−3, −0.2], others N(0, 1). */
export function scanInputs(
  dims: { batch: number; T: number; H: number; P: number; G: number; N: number },
  seed: number,
  withState: boolean,
): ScanInputs {
  const { batch, T, H, P, G, N } = dims;
  return {
    x: randn([batch, T, H, P], seed + 1),
    dt: randu([batch, T, H], seed + 2, 0.01, 0.5),
    A: randu([H], seed + 3, -3, -0.2),
    B: randn([batch, T, G, N], seed + 4),
    C: randn([batch, T, G, N], seed + 5),
    s0: withState ? randn([batch, H, P, N], seed + 6) : null,
  };
}
