/*
 * WGSL for a kernel that reads an input which may still be partial sums (`GpuTensor.partialSums`:
 * a split-K GEMM's products, a column sum's row blocks): `fn <fnName>(i) -> f32` gives element i
 * of buffer `buf`,
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

/** The names of the two params `partialSumWgsl(_, buf)` reads: the partial count and stride. */
export const partialSumNames = (buf: string) => ({ S: `${buf}S`, stride: `${buf}Stride` });

/** Those two params' declarations. */
export function partialSumParams(buf: string): Record<string, ParamType> {
  const n = partialSumNames(buf);
  return { [n.S]: "u32", [n.stride]: "u32" };
}
