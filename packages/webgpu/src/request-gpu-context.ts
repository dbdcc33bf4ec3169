/// <reference types="@webgpu/types" />
/*
 * Opening a `GpuContext` on an adapter: the limits and optional features a looped model's
 * kernels ask for, and the adapter's name and subgroup size handed to the context.
 */
import { GpuContext } from "./gpu-context.js";

/** The device limits a looped model's kernels ask for: as much as the adapter offers. */
const WANTED_LIMITS = [
  "maxStorageBuffersPerShaderStage",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
] as const;

/** Features requested whenever the adapter has them: f16 storage (mixed precision), subgroups. */
const OPTIONAL_FEATURES = ["shader-f16", "subgroups"] as GPUFeatureName[];

/**
 * A context on the first adapter of `gpu` (`navigator.gpu` in a browser; the Dawn binding's
 * object in Node, see `@loop/webgpu/node`). Throws one sentence when there is no adapter.
 */
export async function requestGpuContext(
  gpu: GPU | undefined,
  opts: {
    powerPreference?: GPUPowerPreference;
    hint?: string;
    /** More optional features to ask for where the adapter has them (subgroup matrices). */
    extraFeatures?: readonly string[];
  } = {},
): Promise<GpuContext> {
  if (!gpu)
    throw new Error(`webgpu: this environment has no WebGPU${opts.hint ? ` (${opts.hint})` : ""}`);
  const adapter = await gpu.requestAdapter({
    powerPreference: opts.powerPreference ?? "high-performance",
  });
  if (!adapter)
    throw new Error(`webgpu: no GPU adapter was found${opts.hint ? ` (${opts.hint})` : ""}`);
  const requiredLimits: Record<string, number> = {};
  for (const k of WANTED_LIMITS) requiredLimits[k] = adapter.limits[k];
  // Optional features the kernels use where present (precision.ts, the subgroup reductions).
  const requiredFeatures = [
    ...OPTIONAL_FEATURES,
    ...((opts.extraFeatures ?? []) as GPUFeatureName[]),
  ].filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  const info = adapter.info;
  const name = [info?.vendor, info?.architecture, info?.device, info?.description]
    .filter((s) => s)
    .join(" ");
  const subgroupMinSize = device.features.has("subgroups")
    ? (info as { subgroupMinSize?: number } | undefined)?.subgroupMinSize
    : undefined;
  return new GpuContext(device, {
    adapterName: name || "WebGPU adapter",
    keepAlive: [gpu, adapter],
    subgroupMinSize,
    adapter: {
      features: [...adapter.features].map(String).sort(),
      subgroupMatrixConfigs: subgroupMatrixConfigs(info),
    },
  });
}

/** The adapter's subgroup-matrix configurations as "M×N×K component→result" (Dawn's names). */
function subgroupMatrixConfigs(info: GPUAdapterInfo | undefined): string[] {
  const configs = (
    info as { subgroupMatrixConfigs?: Iterable<Record<string, unknown>> } | undefined
  )?.subgroupMatrixConfigs;
  if (!configs) return [];
  return [...configs].map(
    (c) => `${c.M}×${c.N}×${c.K} ${String(c.componentType)}→${String(c.resultComponentType)}`,
  );
}
