/*
 * The numeric precision of a context's matrix products. "fp32" (the default): every GEMM reads
 * f32 operands. "mixed": each GEMM's two operands are rounded to f16 (binary16) and stored so
 * before the product; the products accumulate in f32 and write f32, so the weights, their
 * gradients and the optimiser state stay f32 (master weights). Gradients that would underflow in
 * f16 are kept in range by the step engine's dynamic loss scale (@loop/train).
 *
 * Where the f16 values live: with the device's `shader-f16` feature, native `array<f16>` storage
 * (`enable f16;`); without it, two f16 values packed per u32 word (`pack2x16float`, core WGSL).
 * Both round the same way and give the same products; `storage: "packed"` forces the packed
 * form (tests on adapters without shader-f16, and comparisons on those with it).
 *
 * Kept beside the context (a WeakMap) rather than in it: a precision is a property of the run
 * that uses the device, set once when training starts.
 */
import type { Precision } from "@loop/tensor";
import type { GpuContext } from "./gpu-context.js";

/** The precisions this backend offers (of @loop/tensor's PRECISIONS): fp32, or mixed. */
export const GPU_PRECISIONS = ["fp32", "mixed"] as const satisfies readonly Precision[];
/** One of GPU_PRECISIONS: float32, or mixed (f16 GEMM operands and projection inputs). */
export type GpuPrecision = (typeof GPU_PRECISIONS)[number];

/** How f16 values are stored: native f16 arrays, or two per u32 word. */
export type F16Storage = "native" | "packed";

/** The precision the GPU kernels run at, with how f16 operands are stored under mixed precision. */
export interface PrecisionSetting {
  precision: GpuPrecision;
  /** Only with "mixed": how the f16 operands are stored (set from the device's features). */
  storage: F16Storage;
}

const settings = new WeakMap<GpuContext, PrecisionSetting>();

/** Whether the device was created with WebGPU feature `name` ("shader-f16", "subgroups"). */
export function hasFeature(ctx: GpuContext, name: string): boolean {
  return ctx.device.features.has(name);
}

/**
 * Set the precision of every later GEMM on `ctx`. `storage` defaults to "native" where the device
 * has shader-f16, else "packed"; asking for "native" on a device without it throws.
 */
export function setGpuPrecision(
  ctx: GpuContext,
  precision: GpuPrecision,
  opts: { storage?: F16Storage } = {},
): PrecisionSetting {
  if (!GPU_PRECISIONS.includes(precision))
    throw new Error(
      `webgpu: precision must be one of ${GPU_PRECISIONS.join(", ")}, got ${JSON.stringify(precision)}`,
    );
  const f16 = hasFeature(ctx, "shader-f16");
  const storage = opts.storage ?? (f16 ? "native" : "packed");
  if (storage === "native" && !f16)
    throw new Error(
      `webgpu: native f16 storage needs the adapter's shader-f16 feature, which ${ctx.adapterName} lacks`,
    );
  const s = { precision, storage };
  settings.set(ctx, s);
  return s;
}

/** The context's precision (fp32 unless `setGpuPrecision` said otherwise). */
export function gpuPrecision(ctx: GpuContext): PrecisionSetting {
  return settings.get(ctx) ?? { precision: "fp32", storage: "packed" };
}
