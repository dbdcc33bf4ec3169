/**
 * Binding an input that may still be left as a split-K GEMM's partial sums
 * (`GpuTensor.partialSums`) to a kernel that adds them up as it reads
 * (kernels/wgsl-partial-sum.ts): the partials' buffer with their count and stride, or the
 * tensor's own buffer with count 0.
 */
import type { GpuTensor } from "../gpu-tensor.js";

export function partialSumInput(
  t: GpuTensor,
  name: string,
): { buffer: GPUBuffer; params: Record<string, number> } {
  const p = t.partialSums;
  if (p) return { buffer: p.buf, params: { [`${name}S`]: p.S, [`${name}Stride`]: p.stride } };
  return { buffer: t.buffer, params: { [`${name}S`]: 0, [`${name}Stride`]: 0 } };
}
