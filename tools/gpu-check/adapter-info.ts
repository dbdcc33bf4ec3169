/**
 * What gpu-check records of a WebGPU adapter: the adapter's own description (GPUAdapterInfo),
 * its optional features and its limits, as Dawn reports them.
 */
import { isCpuEmulation } from "@loop/webgpu";

export interface AdapterInfo {
  /** How it was asked for: the power preference, or "fallback" (forceFallbackAdapter). */
  requestedAs: string;
  vendor: string;
  architecture: string;
  device: string;
  /** The driver's description (e.g. "NVIDIA: 550.54.15", "SwiftShader driver 5.0.0"). */
  description: string;
  /** Dawn's own flag for a software adapter. */
  isFallbackAdapter: boolean;
  subgroupMinSize: number | null;
  subgroupMaxSize: number | null;
  features: string[];
  limits: Record<string, number>;
}

/** The features the kernels use or the plans need, in the order the report lists them. */
export const FEATURES_OF_INTEREST = ["shader-f16", "subgroups", "timestamp-query"] as const;

/** The limits that bound the kernels' tiles and buffers. */
export const LIMITS_OF_INTEREST = [
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxStorageBuffersPerShaderStage",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupsPerDimension",
] as const;

/** The adapter's name as `@loop/webgpu` names it (GpuContext.adapterName; the bench's line). */
export function adapterName(a: AdapterInfo): string {
  return [a.vendor, a.architecture, a.device, a.description].filter((s) => s).join(" ");
}

/** A CPU emulation of a GPU (SwiftShader, llvmpipe, lavapipe), by its name or Dawn's flag. */
export function isEmulation(a: AdapterInfo): boolean {
  return a.isFallbackAdapter || isCpuEmulation(adapterName(a));
}

/** The same adapter asked for in several ways appears once. */
export function distinctAdapters(adapters: readonly AdapterInfo[]): AdapterInfo[] {
  const seen = new Set<string>();
  return adapters.filter((a) => {
    const key = `${adapterName(a)}|${a.isFallbackAdapter}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
