/*
 * `@loop/tensor/kernel`: the engine's surface for kernel authors — recording fused ops on the
 * tape, the device backends' tape and backward walk (`DeviceTape`), output allocation (step-pooled, shared with worker threads, kernel temporaries), the GEMM family, the typed registry of native kernel sets, parallel kernels on the
 * thread pool and the scalar helpers kernels share. Model code and users need only
 * `@loop/tensor` (tensors, ops, autograd, optimisers).
 */

export {
  type AutogradDevice,
  type DeviceAutograd,
  deviceAutograd,
} from "./autograd/device-autograd.js";
export { DeviceTape } from "./autograd/device-tape.js";
export type {
  DeviceNode,
  GradTarget,
  TapeMemory,
  TapeTensor,
  WalkOptions,
} from "./autograd/device-tape-types.js";
export { topoOrder } from "./autograd/device-walk.js";
export { type BackwardFn, type GradNode, record, record1 } from "./autograd/node.js";
export { type ClipDevice, DeferredClip } from "./backend/deferred-clip.js";
export { type GemmFn, gemm, gemmName, setGemm } from "./kernels/gemm.js";
export { gemmJs } from "./kernels/gemm-js.js";
export {
  gemmParallel,
  gemmParallelJs,
  PARALLEL_MIN_MACS,
  setGemmParallelThreshold,
} from "./kernels/gemm-parallel.js";
export { gemmRef } from "./kernels/gemm-ref.js";
export { gemmWasm, wasmSimdAvailable } from "./kernels/gemm-wasm.js";
export { transposeInto } from "./kernels/transpose-into.js";
export {
  type CpuKernels,
  currentKernels,
  type KernelGroup,
  kernelSet,
  type NativeKernelSets,
  nativeKernelNames,
  registerKernelSet,
  withKernels,
} from "./native-registry.js";
export { fastExp } from "./ops/fast-exp.js";
export { sigmoidScalar, softplusScalar } from "./ops/unary.js";
export { documentResets, documentStarts, optionalArg } from "./packed-documents.js";
export { withTemporaries } from "./scratch.js";
export { allocShared, allocShared64, shareable } from "./shareable.js";
export { allocF32, allocF32Uninit, allocPersistentF32 } from "./tensor.js";
export type { TensorKernelSet } from "./tensor-kernel-set.js";
export {
  currentPool,
  installPool,
  type ParallelForOptions,
  parallelFor,
  setThreadLimit,
  type ThreadPool,
  threadCount,
  type WorkerPort,
} from "./threads/pool.js";

export { defineKernel, type KernelArgs, type ParallelKernel } from "./threads/registry.js";
