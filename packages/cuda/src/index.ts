/*
 * @loop/cuda: the CUDA backend of looplm (docs/cuda.md). Its ops implement @loop/tensor's
 * `BackendOps` over a `CudaDevice`; `@loop/cuda/node` starts a real one (driver loaded at run
 * time, kernels compiled on first use), `recordingDevice` plans without a GPU.
 */
export { type CudaBackend, cudaBackend } from "./backend-ops.js";
export { type AllocatorStats, CachingAllocator, sizeClass } from "./caching-allocator.js";
export { cudaCapabilities } from "./capabilities.js";
export { CudaContext, type CudaContextOptions } from "./context.js";
export { CudaTensor, type DType } from "./cuda-tensor.js";
export { type CudaDevice, type Dim3, type LtGemm, packArgs } from "./device.js";
export { KERNEL_FILES, KERNEL_MAX_SHARED, KERNELS, type KernelName } from "./kernel-table.js";
export {
  appendAndAttendOn,
  type CudaKvCache,
  kvCacheOn,
  ropeAt,
} from "./ops/attention-decode.js";
export {
  type CudaMamba2State,
  type CudaMamba2StepConfig,
  type CudaMamba2StepWeights,
  mamba2StepState,
} from "./ops/mamba2-step.js";
export {
  CUDA_PRECISIONS,
  type CudaPrecision,
  gemmPath,
  isCudaPrecision,
  parseCudaPrecision,
} from "./precision.js";
export { type RecordedLaunch, type RecordingDevice, recordingDevice } from "./recording-device.js";
