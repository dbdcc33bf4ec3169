/**
 * The golden kernel cases (@loop/test-support `loadKernelCase`) on the WebGPU backend: upload a
 * case's tensors, seed the backward with its `dy`, read results back and compare them with the
 * docs/formats.md tolerance.
 */
import { expectGolden, type KernelCase } from "@loop/test-support";
import type { GpuContext, GpuTensor } from "@loop/webgpu";
import { uploadTensor } from "@loop/webgpu";
import { backwardGpu, gpuParameter } from "@loop/webgpu/internal";

/**
 * Tensors of the case on the device: those in `grad` as trainable leaves, the rest constant; all
 * persistent (releaseTransients between steps of a test keeps them).
 */
export function gpuTensors(
  ctx: GpuContext,
  c: KernelCase,
  names: readonly string[],
  grad: readonly string[] = [],
): Record<string, GpuTensor> {
  const out: Record<string, GpuTensor> = {};
  for (const n of names) {
    const t = c.get(n);
    out[n] = grad.includes(n)
      ? gpuParameter(ctx, c.copy(n), t.shape)
      : uploadTensor(ctx, c.copy(n), t.shape, { persistent: true });
  }
  return out;
}

/** An integer input of the case as an i32 tensor. */
export function gpuInts(ctx: GpuContext, c: KernelCase, name: string): GpuTensor {
  return uploadTensor(ctx, c.ints(name), c.get(name).shape);
}

/** Compare a device tensor with the case's tensor `expected` (forward or grad tolerance). */
export async function expectGpuGolden(
  what: string,
  t: GpuTensor | null,
  c: KernelCase,
  expected: string,
  kind: "forward" | "grad",
): Promise<void> {
  if (!t) throw new Error(`${what}: the backend produced no tensor`);
  expectGolden(what, await t.read(), c.get(expected).data, kind);
}

/** Backward from `y` seeded with the case's dy, then every `grad.{name}` of `leaves`. */
export async function expectGpuGrads(
  ctx: GpuContext,
  c: KernelCase,
  y: GpuTensor,
  leaves: Record<string, GpuTensor>,
  names: readonly string[],
): Promise<void> {
  backwardGpu(y, uploadTensor(ctx, c.copy("dy"), c.get("dy").shape));
  for (const n of names)
    await expectGpuGolden(`grad.${n}`, leaves[n]!.grad, c, `grad.${n}`, "grad");
}
