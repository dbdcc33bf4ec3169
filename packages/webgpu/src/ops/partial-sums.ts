/*
 * Binding an input that may still be left as partial sums (`GpuTensor.partialSums`: a split-K
 * GEMM's products, a column sum's row blocks) to a kernel that adds them up as it reads
 * (kernels/wgsl-partial-sum.ts): the partials' buffer with their count and stride, or the
 * tensor's own buffer with count 0.
 */
import type { GpuTensor } from "../gpu-tensor.js";
import { partialSumNames } from "../kernels/wgsl-partial-sum.js";

export function partialSumInput(
  t: GpuTensor,
  name: string,
): { buffer: GPUBuffer; params: Record<string, number> } {
  const n = partialSumNames(name);
  const p = t.partialSums;
  if (p) return { buffer: p.buf, params: { [n.S]: p.S, [n.stride]: p.stride } };
  return { buffer: t.buffer, params: { [n.S]: 0, [n.stride]: 0 } };
}
