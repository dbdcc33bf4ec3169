/**
 * WGSL for a kernel that reads an input which may still be a split-K GEMM's partial sums
 * (`GpuTensor.partialSums`): `fn <fnName>(i) -> f32` gives element i of buffer `buf`,
 *   buf[i]                                  when p.<buf>S = 0 (a plain tensor),
 *   Σ_{s<S} buf[s·p.<buf>Stride + i]        otherwise (S partials, summed in s order from 0.0),
 * the latter the very sum the split-K sum kernel would have written (kernels/gemm.ts), so a
 * consumer reading it this way computes the same bits without the sum's own dispatch.
 * The kernel declares the params `partialSumParams(buf)`; ops/partial-sums.ts binds them.
 */
import type { ParamType } from "../kernel-def.js";

export function partialSumWgsl(fnName: string, buf: string): string {
  return `fn ${fnName}(i: u32) -> f32 {
  if (p.${buf}S == 0u) { return ${buf}[i]; }
  var v = 0.0;
  for (var s = 0u; s < p.${buf}S; s++) { v += ${buf}[s * p.${buf}Stride + i]; }
  return v;
}`;
}

/** The two params `partialSumWgsl(_, buf)` reads: the partial count and their stride. */
export function partialSumParams(buf: string): Record<string, ParamType> {
  return { [`${buf}S`]: "u32", [`${buf}Stride`]: "u32" };
}
