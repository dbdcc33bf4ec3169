/*
 * The gate objectives of docs/exit-gate.md "Training", as @loop/exit-gate's stage1Objective and
 * stage2Objective, on a step-major [R, M] layout with one thread per token m (or per (r, m)):
 * each *Terms kernel writes tf = [term_m | flag_m] (flag 1 where target_m ≠ −100, term 0
 * elsewhere), maskedMean (masked-mean.ts) divides the sum by N = Σ flag (times R for stage 2)
 * and keeps N for the backward.
 *   stage 1: term = Σ_r p(r)·(ℓ(r) + β·u(r)), u = ln p;  backward with s = ∂L/N:
 *     ∂ℓ(r) = s·p(r),  c(r) = s·p(r)·(ℓ(r) + β·(u(r) + 1)) → ∂a by the log-pdf backward
 *   stage 2: w(r) = σ(k·(max(0, ℓ(r−1) − ℓ(r)) − γ)),
 *     term = Σ_{r≥2} w·softplus(a(r)) + (1 − w)·softplus(−a(r));
 *     ∂a(r) = ∂L·(σ(a(r)) − 1 + w(r))/(N·R) for r ≥ 2, 0 for r = 1 (ℓ is a constant)
 * With N = 0 the losses are NaN and the gradients zero, as on the CPU.
 */
import { defineKernel } from "../kernel-def.js";
import { LOG_PDF_BACKWARD, logPdfLoop, PDF_HEAD } from "./exit-pdf.js";

const IGNORE = -100;
const HEAD = `${PDF_HEAD}
  let ignored = targets[m] == ${IGNORE};`;

export const stage1TermsKernel = defineKernel({
  name: "stage1/terms",
  params: { R: "u32", M: "u32", beta: "f32" },
  buffers: { a: "read", ce: "read", targets: "read:i32", tf: "rw" },
  body: `${HEAD}
  if (ignored) { tf[m] = 0.0; tf[p.M + m] = 0.0; return; }
  var acc = 0.0;
  ${logPdfLoop("acc += exp(u) * (ce[i] + p.beta * u);")}
  tf[m] = acc;
  tf[p.M + m] = 1.0;
}`,
});

export const stage1BackwardKernel = defineKernel({
  name: "stage1/backward",
  params: { R: "u32", M: "u32", beta: "f32" },
  buffers: {
    a: "read",
    ce: "read",
    targets: "read:i32",
    g: "read",
    count: "read",
    ga: "rw",
    gce: "rw",
  },
  body: `${HEAD}
  if (ignored || count[0] == 0.0) {
    for (var r = 0u; r < p.R; r++) { ga[r * p.M + m] = 0.0; gce[r * p.M + m] = 0.0; }
    return;
  }
  let s = g[0] / count[0];
  ${logPdfLoop("let pr = exp(u);\n    gce[i] = s * pr;\n    ga[i] = s * pr * (ce[i] + p.beta * (u + 1.0));")}
  ${LOG_PDF_BACKWARD}
}`,
});

const LABEL = `
fn label(ce: f32, prev: f32) -> f32 {
  return sigmoid(p.k * (max(0.0, prev - ce) - p.gamma));
}`;

export const stage2TermsKernel = defineKernel({
  name: "stage2/terms",
  params: { R: "u32", M: "u32", k: "f32", gamma: "f32" },
  buffers: { a: "read", ce: "read", targets: "read:i32", tf: "rw" },
  body: `${LABEL}${HEAD}
  if (ignored) { tf[m] = 0.0; tf[p.M + m] = 0.0; return; }
  var acc = 0.0;
  for (var r = 1u; r < p.R; r++) {
    let i = r * p.M + m;
    let w = label(ce[i], ce[i - p.M]);
    acc += w * softplus(a[i]) + (1.0 - w) * softplus(-a[i]);
  }
  tf[m] = acc;
  tf[p.M + m] = 1.0;
}`,
});

export const stage2BackwardKernel = defineKernel({
  name: "stage2/backward",
  params: { R: "u32", M: "u32", k: "f32", gamma: "f32" },
  buffers: { a: "read", ce: "read", targets: "read:i32", g: "read", count: "read", ga: "rw" },
  body: `${LABEL}${HEAD}
  for (var r = 0u; r < p.R; r++) {
    let i = r * p.M + m;
    if (r == 0u || ignored || count[0] == 0.0) { ga[i] = 0.0; continue; }
    let s = g[0] / (count[0] * f32(p.R));
    ga[i] = s * (sigmoid(a[i]) - 1.0 + label(ce[i], ce[i - p.M]));
  }
}`,
});
