/**
 * Threshold exit (docs/exit-gate.md "Inference: threshold exit"):
 *   CDF(n)_m = Σ_{r≤n} p(r)_m,   z_m = min{ n : CDF(n)_m ≥ q }  (R if never reached)
 * The CDF is summed in float64 from the float32 p. Σ_r p(r) is 1 only up to rounding, so at q = 1
 * CDF(R) may fall just short; z = R then by the "never reached" rule, which is also what the exact
 * CDF(R) = 1 gives. q = 0 exits every token at step 1. Steps are 1-based, defined at every
 * position (ignored targets included).
 * Shapes: p [R, ...S] → CDF [R, ...S] (Float64Array), steps int [...S].
 */
import { IntTensor, type Shape } from "@loop/tensor";
import { checkStepMajor } from "./shapes.js";

export interface PdfLike {
  data: ArrayLike<number>;
  shape: Shape;
}

/** CDF(n) for n = 1..R, float64, [R, ...S] row-major. */
export function exitCdf(pdf: PdfLike): Float64Array {
  const { R, M } = checkStepMajor(pdf, "pdf", "exitCdf");
  const cdf = new Float64Array(R * M);
  for (let m = 0; m < M; m++) {
    let acc = 0;
    for (let r = 0; r < R; r++) {
      acc += pdf.data[r * M + m]!;
      cdf[r * M + m] = acc;
    }
  }
  return cdf;
}

function checkQ(q: number, op: string): void {
  if (!(q >= 0 && q <= 1)) throw new Error(`${op}: q must be in [0, 1], got ${q}`);
}

/** Per-token exit step z (1-based) for threshold q. */
export function thresholdExit(pdf: PdfLike, q: number): IntTensor {
  const { R, M, tokenShape } = checkStepMajor(pdf, "pdf", "thresholdExit");
  checkQ(q, "thresholdExit");
  const z = new Int32Array(M);
  for (let m = 0; m < M; m++) {
    let acc = 0;
    let step = R;
    for (let r = 0; r < R; r++) {
      acc += pdf.data[r * M + m]!;
      if (acc >= q) {
        step = r + 1;
        break;
      }
    }
    z[m] = step;
  }
  return new IntTensor(z, tokenShape);
}

/** Every token exits at the fixed step `step` (1-based): Ouro's `exit_at_step`. */
export function fixedExitSteps(tokenShape: Shape, step: number, nSteps: number): IntTensor {
  if (!Number.isInteger(step) || step < 1 || step > nSteps) {
    throw new Error(`fixedExitSteps: step must be an integer in [1, ${nSteps}], got ${step}`);
  }
  const n = tokenShape.reduce((a, b) => a * b, 1);
  return new IntTensor(new Int32Array(n).fill(step), tokenShape);
}
