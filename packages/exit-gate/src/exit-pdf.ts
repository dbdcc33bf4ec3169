/*
 * The exit distribution as a fused op (docs/exit-gate.md "Gate and exit distribution"):
 *   p(r) = λ(r)·S(r−1) for r < R,  p(R) = S(R−1),  S(r) = Π_{j≤r} (1 − λ(j)),  λ = sigmoid(a)
 * computed in log space in float64 (log-pdf.ts) so it is exact for large |a| and Σ_r p(r) = 1.
 * Shapes: gate logits a [R, ...S] → p [R, ...S]. Backward ∂a from ∂p via c(r) = ∂p(r)·p(r).
 */
import type { Tensor } from "@loop/tensor";
import { allocF32, record1 } from "@loop/tensor/kernel";
import { logPdfBackward, logPdfForward } from "./log-pdf.js";
import { checkStepMajor } from "./shapes.js";

/**
 * The exit distribution p [R, …] from gate logits [R, …]: p_r = λ_r ∏_{s<r}(1 − λ_s), with the
 * remaining mass on step R (docs/exit-gate.md); differentiable.
 */
export function exitPdf(gateLogits: Tensor): Tensor {
  const { R, M } = checkStepMajor(gateLogits, "gateLogits", "exitPdf");
  const n = R * M;
  const u = new Float64Array(n);
  const lam = new Float64Array(n);
  logPdfForward(gateLogits.data, R, M, u, lam);
  const p = allocF32(n);
  for (let i = 0; i < n; i++) p[i] = Math.exp(u[i]!);
  return record1("exitPdf", [gateLogits], p, gateLogits.shape, ([g]) => {
    const c = new Float64Array(n);
    for (let i = 0; i < n; i++) c[i] = g![i]! * Math.exp(u[i]!);
    const ga = new Float32Array(n);
    logPdfBackward(c, lam, R, M, ga);
    return [ga];
  });
}
