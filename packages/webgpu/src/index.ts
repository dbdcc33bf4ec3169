/*
 * `@loop/webgpu`: the WebGPU backend. A `GpuContext` wraps one device; `GpuTensor`s live on it
 * for a whole training step; `gpuBackendOps(ctx)` is the backend's `ModelOps` and `TrainOps`,
 * on which @loop/looped's `toDevice` and @loop/train's `deviceTraining` run the model. In a
 * browser pass `navigator.gpu` to `requestGpuContext`; in Node use `@loop/webgpu/node`. The
 * individual GPU ops, the tape and the kernels' helpers are `@loop/webgpu/internal` (for this
 * project's tests and benchmarks; they may change with any release).
 */
export { isCpuEmulation } from "./adapter-kind.js";
export { gpuCapabilities } from "./capabilities.js";
export { type GemmProbeResult, gemmThroughput } from "./gemm-probe.js";
export { type GpuTrainOptions, gpuAutograd } from "./gpu-autograd.js";
export { gpuBackendOps } from "./gpu-backend-ops.js";
export { type AdapterOffer, GpuContext, type GpuContextOptions } from "./gpu-context.js";
export type { GpuCounters, GpuEvent, GpuMemory } from "./gpu-counters.js";
export { zeroCounters } from "./gpu-counters.js";
export { type GpuPeak, measureGpuPeak } from "./gpu-peak.js";
export { type GpuDtype, GpuTensor, releaseTransients, uploadTensor } from "./gpu-tensor.js";
export { type GpuGradients, type GpuNamedParameter, gpuTrainOps } from "./gpu-train-ops.js";
export { gpuModelOps } from "./model-ops.js";
export {
  type F16Storage,
  GPU_PRECISIONS,
  type GpuPrecision,
  gpuPrecision,
  type PrecisionSetting,
  setGpuPrecision,
} from "./precision.js";
export { requestGpuContext } from "./request-gpu-context.js";
