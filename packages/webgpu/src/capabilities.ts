/*
 * The WebGPU backend's capabilities (@loop/tensor's BackendCapabilities), read from its device:
 * device memory, fp32 and mixed precision, the decoding its decode kernels give,
 * the built-in mixers, the composites its ops fuse and the optional features the device was
 * created with (shader-f16, subgroups, subgroup-matrix).
 */
import {
  type BackendCapabilities,
  type BackendFeature,
  decodeCapability,
  fusedComposites,
} from "@loop/tensor";
import type { GpuContext } from "./gpu-context.js";
import { GPU_PRECISIONS } from "./precision.js";

/** Dawn's name of the subgroup-matrix feature. */
export const SUBGROUP_MATRIX = "chromium-experimental-subgroup-matrix";

/** The device's WebGPU feature behind each backend feature. */
const FEATURES: readonly (readonly [BackendFeature, string])[] = [
  ["f16", "shader-f16"],
  ["subgroups", "subgroups"],
  ["subgroup-matrix", SUBGROUP_MATRIX],
];

/** What the WebGPU backend on `ctx` with `ops` (gpuBackendOps(ctx)) has. */
export function gpuCapabilities(ctx: GpuContext, ops: object): BackendCapabilities {
  return {
    memory: "device",
    precisions: GPU_PRECISIONS,
    decode: decodeCapability(ops),
    train: { customMixers: false },
    fused: fusedComposites(ops),
    features: FEATURES.filter(([, f]) => ctx.device.features.has(f)).map(([b]) => b),
    gemm: "WGSL tiled GEMM",
  };
}
