/**
 * How a device backend's case results are compared with the CPU's (cuda/op-cases.ts): one
 * relative error per tensor, max |a − b| over max |b|, against a tolerance per GEMM precision
 * (fp32 to float32 rounding of another summation order; tf32 and bf16 to their operands').
 */
import type { CaseResult } from "./op-cases.js";

/** The tolerance of each precision. */
export const TOLERANCE = { fp32: 2e-4, tf32: 5e-3, bf16: 4e-2 } as const;

/** max |a − b| / max(max |b|, 1e-3): one figure per tensor. */
export function relErr(a: Float32Array, b: Float32Array): number {
  let d = 0;
  let m = 1e-3;
  for (let k = 0; k < b.length; k++) {
    d = Math.max(d, Math.abs(a[k]! - b[k]!));
    m = Math.max(m, Math.abs(b[k]!));
  }
  return a.length === b.length ? d / m : Number.POSITIVE_INFINITY;
}

/** The mismatches of `got` against the CPU's `want`, one line each. */
export function mismatches(got: CaseResult, want: CaseResult, tol: number): string[] {
  const out: string[] = [];
  const e = relErr(got.out, want.out);
  if (!(e <= tol)) out.push(`output: relative error ${e.toExponential(2)}`);
  const l = Math.abs(got.loss - want.loss) / Math.max(1e-3, Math.abs(want.loss));
  if (!(l <= tol)) out.push(`objective: ${got.loss} vs ${want.loss}`);
  want.grads.forEach((g, k) => {
    const h = got.grads[k];
    if ((g === null) !== (h == null))
      out.push(`input ${k}: gradient ${g ? "missing" : "unexpected"}`);
    else if (g && h) {
      const r = relErr(h, g);
      if (!(r <= tol)) out.push(`input ${k} gradient: relative error ${r.toExponential(2)}`);
    }
  });
  return out;
}
