/**
 * Helpers for the WebGPU op tests that compare a GPU op against its CPU twin (the oracle): the
 * same values on the device, and a float32 closeness check that names the worst element.
 */
import type { IntTensor, Tensor } from "@loop/tensor";
import { type GpuContext, type GpuTensor, gpuParameter, uploadTensor } from "@loop/webgpu";
import { expect } from "vitest";

/** A CPU tensor's values as a GPU leaf (trainable unless `requiresGrad` is false). */
export function toGpu(ctx: GpuContext, t: Tensor, requiresGrad = true): GpuTensor {
  return requiresGrad
    ? gpuParameter(ctx, t.data.slice(), t.shape)
    : uploadTensor(ctx, t.data.slice(), t.shape);
}

/** An int CPU tensor (targets, ids) as an i32 GPU tensor. */
export function toGpuInt(ctx: GpuContext, t: IntTensor): GpuTensor {
  return uploadTensor(ctx, Int32Array.from(t.data), t.shape);
}

/**
 * Expect |actual − expected| ≤ tol·(1 + |expected|) everywhere (float32 results of differently
 * ordered sums); the message names the first element out of tolerance.
 */
export async function expectClose(
  actual: GpuTensor | Float32Array,
  expected: ArrayLike<number>,
  what: string,
  tol = 1e-4,
): Promise<void> {
  const a = actual instanceof Float32Array ? actual : await actual.read();
  expect(a.length, `${what}: length`).toBe(expected.length);
  for (let i = 0; i < a.length; i++) {
    const e = expected[i]!;
    if (Number.isNaN(e)) {
      expect(Number.isNaN(a[i]!), `${what}[${i}] should be NaN, got ${a[i]}`).toBe(true);
      continue;
    }
    if (!(Math.abs(a[i]! - e) <= tol * (1 + Math.abs(e))))
      expect.fail(`${what}[${i}] = ${a[i]}, expected ${e} (tolerance ${tol}·(1+|e|))`);
  }
}
