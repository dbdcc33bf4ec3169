/*
 * Threshold exit (docs/exit-gate.md "Inference: threshold exit"):
 *   CDF(n)_m = Σ_{r≤n} p(r)_m,   z_m = min{ n : CDF(n)_m ≥ q }  (R if never reached)
 * The CDF is summed in float64 from the float32 p. Σ_r p(r) is 1 only up to rounding, so at q = 1
 * CDF(R) may fall just short; z = R then by the "never reached" rule, which is also what the exact
 * CDF(R) = 1 gives. q = 0 exits every token at step 1. Steps are 1-based, defined at every
 * position (ignored targets included).
 * Shapes: p [R, ...S] → CDF [R, ...S] (Float64Array), steps int [...S].
 *
 * The same rule decided online, one loop step at a time (early-exit decoding), from the gate
 * logits a(r) instead of the whole pdf:
 *   CDF(n) = 1 − S(n),  S(n) = Π_{j≤n} (1 − λ(j))   (the pdf telescopes)
 *   exit at the first n < R with CDF(n) ≥ q  ⇔  ln S(n) ≤ ln(1 − q),  else at R.
 * ln S(n) = Σ_j logsigmoid(−a(j)) is accumulated in float64, so step n needs only steps ≤ n and
 * both ends are exact: q = 0 (ln 1 = 0) exits at step 1, q = 1 (ln 0 = −∞) never exits before R,
 * whatever the rounding of Σ p.
 */
import { IntTensor, type Shape } from "@loop/tensor";
import { checkStepMajor } from "./shapes.js";

/** An exit distribution as data only: values and shape [R, …]. */
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

/** Check an exit threshold: q ∈ [0, 1], else an error naming `op`. */
export function checkThreshold(q: number, op: string): void {
  if (!(q >= 0 && q <= 1)) throw new Error(`${op}: q must be in [0, 1], got ${q}`);
}

/** Per-token exit step z (1-based) for threshold q. */
export function thresholdExit(pdf: PdfLike, q: number): IntTensor {
  const { R, M, tokenShape } = checkStepMajor(pdf, "pdf", "thresholdExit");
  checkThreshold(q, "thresholdExit");
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

/** ln(1 − q), the bound on ln S(n); validates q ∈ [0, 1]. */
export function logSurvivalBound(q: number, op: string): number {
  checkThreshold(q, op);
  return Math.log1p(-q);
}

/** logsigmoid(−a) = −softplus(a) = ln(1 − sigmoid(a)), stable for any a. */
export function logOneMinusSigmoid(a: number): number {
  return -(Math.max(a, 0) + Math.log1p(Math.exp(-Math.abs(a))));
}

/** Threshold exit decided online for `rows` independent rows (see the header). */
export class OnlineThresholdExit {
  private readonly bound: number;
  private readonly logS: Float64Array;

  /** Validates q ∈ [0, 1] (errors name `op`). */
  constructor(q: number, rows: number, op = "thresholdExit") {
    this.bound = logSurvivalBound(q, op);
    this.logS = new Float64Array(rows);
  }

  /** Feed row b's gate logit a of its next step n (< R); true when CDF(n) ≥ q: exit at n. */
  step(b: number, a: number): boolean {
    this.logS[b]! += logOneMinusSigmoid(a);
    return this.logS[b]! <= this.bound;
  }
}
