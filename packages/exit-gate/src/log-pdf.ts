/*
 * Exit distribution in log space (docs/exit-gate.md "Gate and exit distribution"), float64 kernels
 * shared by `exitPdf` and the stage-1 objective. For gate logit a and λ = sigmoid(a):
 *   ln λ = logsigmoid(a),  ln(1 − λ) = logsigmoid(−a)         (exact for any |a|)
 *   u(r) = ln p(r) = ln λ(r) + Σ_{j<r} ln(1 − λ(j))   for r < R
 *   u(R) = ln p(R) = Σ_{j<R} ln(1 − λ(j))              (remainder; λ(R) unused)
 * Backward: with c(r) = ∂L/∂u(r) (= ∂L/∂p(r) · p(r)),
 *   ∂u(r)/∂a(r) = 1 − λ(r) (r < R),  ∂u(r)/∂a(j) = −λ(j) (j < r),  so
 *   ∂L/∂a(j) = c(j)·(1 − λ(j)) − λ(j)·Σ_{r>j} c(r)  for j < R,  ∂L/∂a(R) = 0.
 * Layout: a, u, λ, c, ∂a are [R, M] row-major (step-major), M token positions.
 */
import { sigmoidScalar, softplusScalar } from "@loop/tensor/kernel";

/** Fill u = ln p and lam = λ (both [R, M], float64) from gate logits a [R, M]. */
export function logPdfForward(
  a: ArrayLike<number>,
  R: number,
  M: number,
  u: Float64Array,
  lam: Float64Array,
): void {
  for (let m = 0; m < M; m++) {
    let logSurv = 0; // ln S(r−1)
    for (let r = 0; r < R; r++) {
      const i = r * M + m;
      const x = a[i]!;
      lam[i] = sigmoidScalar(x);
      if (r === R - 1) {
        u[i] = logSurv;
      } else {
        u[i] = logSurv - softplusScalar(-x); // + logsigmoid(a)
        logSurv -= softplusScalar(x); // + logsigmoid(−a)
      }
    }
  }
}

/** ∂L/∂a [R, M] from c = ∂L/∂u and λ (see header). */
export function logPdfBackward(
  c: Float64Array,
  lam: Float64Array,
  R: number,
  M: number,
  ga: Float32Array,
): void {
  for (let m = 0; m < M; m++) {
    let tail = 0; // Σ_{r>j} c(r)
    for (let j = R - 1; j >= 0; j--) {
      const i = j * M + m;
      if (j < R - 1) {
        const l = lam[i]!;
        ga[i] = c[i]! * (1 - l) - l * tail;
      } else {
        ga[i] = 0;
      }
      tail += c[i]!;
    }
  }
}
