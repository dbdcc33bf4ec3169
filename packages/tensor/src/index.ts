export { type BackwardOptions, backward, grad } from "./autograd/backward.js";
export { checkpoint } from "./autograd/checkpoint.js";
export { releaseGrads } from "./autograd/leaf-grad.js";
export {
  type BackwardFn,
  enableGrad,
  type GradNode,
  isGradEnabled,
  noGrad,
  record,
  record1,
} from "./autograd/node.js";
export { type GradcheckOptions, type GradcheckResult, gradcheck } from "./gradcheck.js";
export {
  decodeSafetensors,
  encodeSafetensors,
  type NamedArray,
  type SafetensorsFile,
} from "./io/safetensors.js";
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
export { assignParameter, type Module, type NamedParameter, prefixed } from "./module.js";
export { nativeKernel, nativeKernelNames, registerNativeKernels } from "./native-registry.js";
export { add, div, mul, scale, sub } from "./ops/binary.js";
export { embedding } from "./ops/embedding.js";
export { fastExp } from "./ops/fast-exp.js";
export { linearSplit } from "./ops/linear-split.js";
export {
  countTargets,
  crossEntropy,
  crossEntropyPerToken,
  entropy,
  IGNORE_INDEX,
  logSoftmax,
} from "./ops/loss.js";
export { linear, type MatmulOptions, matmul } from "./ops/matmul.js";
export { mean, meanLast, sum, sumLast } from "./ops/reduce.js";
export { rmsnorm } from "./ops/rmsnorm.js";
export { concat, reshape, sliceRows, split, stack } from "./ops/shape.js";
export { siluSplit } from "./ops/silu-split.js";
export {
  exp,
  log,
  logsigmoid,
  neg,
  sigmoid,
  sigmoidScalar,
  silu,
  softplus,
  softplusScalar,
} from "./ops/unary.js";
export { AdamW, type AdamWOptions, type AdamWState } from "./optim/adamw.js";
export { clipGradNorm, gradNorm } from "./optim/clip.js";
export { type WarmupCosineOptions, warmupCosine } from "./optim/schedule.js";
export { documentResets, documentStarts, optionalArg } from "./packed-documents.js";
export { randn, randu } from "./random-tensor.js";
export { Rng, type RngState } from "./rng.js";
export { releaseScratch, scratchBytes, withScratch } from "./scratch.js";
export {
  allocF32,
  allocF32Uninit,
  full,
  IntTensor,
  intTensor,
  parameter,
  type Shape,
  sameShape,
  shapeStr,
  sizeOf,
  Tensor,
  tensor,
  zeros,
} from "./tensor.js";
export {
  currentPool,
  installPool,
  type ParallelForOptions,
  parallelFor,
  type ThreadPool,
  threadCount,
  type WorkerPort,
} from "./threads/pool.js";
export { defineKernel, type KernelArgs, type ParallelKernel } from "./threads/registry.js";
