/*
 * The exit distribution in log space (docs/exit-gate.md), as @loop/exit-gate's log-pdf.ts, one
 * thread per token m over the R loop steps of a [R, M] step-major layout:
 *   u(r) = ln p(r) = logsigmoid(a(r)) + Σ_{j<r} logsigmoid(−a(j))  (r < R),
 *   u(R) = Σ_{j<R} logsigmoid(−a(j))                                 p = e^u
 * Backward from c(r) = ∂L/∂u(r):  ∂a(j) = c(j)·(1 − λ(j)) − λ(j)·Σ_{r>j} c(r) (j < R), ∂a(R) = 0.
 * exitPdf's backward has c = ∂p·p. The CPU computes in float64; here float32 with logsigmoid
 * written to stay exact for large |a| (wgsl-math.ts).
 */
import { defineKernel } from "../kernel-def.js";
import { WGSL_MATH } from "./wgsl-math.js";

export const PDF_GROUP = 64;

/** WGSL: for token m, the loop over r running `inner` with u = ln p(r) and i = r·M + m. */
export function logPdfLoop(inner: string): string {
  return `
  var logSurv = 0.0;
  for (var r = 0u; r < p.R; r++) {
    let i = r * p.M + m;
    var u = logSurv;
    if (r + 1u < p.R) {
      u = logSurv + logsigmoid(a[i]);
      logSurv += logsigmoid(-a[i]);
    }
    ${inner}
  }`;
}

/**
 * WGSL: ∂a from c(r) already stored in ga[r·M + m] (read, then overwritten, by this thread only).
 */
export const LOG_PDF_BACKWARD = `
  var tail = 0.0;
  for (var jr = 0u; jr < p.R; jr++) {
    let j = p.R - 1u - jr;
    let i = j * p.M + m;
    let c = ga[i];
    if (j + 1u < p.R) {
      let l = sigmoid(a[i]);
      ga[i] = c * (1.0 - l) - l * tail;
    } else {
      ga[i] = 0.0;
    }
    tail += c;
  }`;

/** WGSL: WGSL_MATH and the entry of a per-position gate kernel, one thread per m < p.M. */
export const PDF_HEAD = `${WGSL_MATH}
@compute @workgroup_size(${PDF_GROUP})
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let m = gid.x;
  if (m >= p.M) { return; }`;

export const exitPdfKernel = defineKernel({
  name: "exitPdf/forward",
  params: { R: "u32", M: "u32" },
  buffers: { a: "read", pdf: "rw" },
  body: `${PDF_HEAD}${logPdfLoop("pdf[i] = exp(u);")}
}`,
});

export const exitPdfBackwardKernel = defineKernel({
  name: "exitPdf/backward",
  params: { R: "u32", M: "u32" },
  buffers: { a: "read", pdf: "read", g: "read", ga: "rw" },
  body: `${PDF_HEAD}
  for (var r = 0u; r < p.R; r++) { let i = r * p.M + m; ga[i] = g[i] * pdf[i]; }
  ${LOG_PDF_BACKWARD}
}`,
});
