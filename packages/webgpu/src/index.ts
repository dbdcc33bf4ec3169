/**
 * `@loop/webgpu`: the WebGPU backend. A `GpuContext` wraps one device; `GpuTensor`s live on it
 * for a whole training step; ops enqueue WGSL kernels and record their gradients on a GPU tape.
 * In a browser pass `navigator.gpu` to `requestGpuContext`; in Node use `@loop/webgpu/node`.
 */
export { GpuContext, type GpuContextOptions, requestGpuContext } from "./gpu-context.js";
export {
  type GpuDtype,
  GpuTensor,
  gpuParameter,
  releaseTransients,
  transientCount,
  uploadTensor,
} from "./gpu-tensor.js";
export { add, div, mul, sub } from "./ops/binary.js";
export { causalConv1dSiluSplit } from "./ops/conv-silu-split.js";
export { crossEntropy, crossEntropyPerToken, logSoftmax } from "./ops/cross-entropy.js";
export { scale } from "./ops/elementwise.js";
export { embedding } from "./ops/embedding.js";
export { gatedRmsnorm } from "./ops/gated-rmsnorm.js";
export { linearSplit } from "./ops/linear-split.js";
export { addDSkip, softplusBias } from "./ops/mamba2-ops.js";
export {
  type GpuMamba2State,
  type GpuMamba2StepConfig,
  type GpuMamba2StepWeights,
  mamba2StepState,
} from "./ops/mamba2-step.js";
export { linear, matmul } from "./ops/matmul.js";
export { mean, meanLast, sum, sumLast } from "./ops/reduce.js";
export { rmsnorm } from "./ops/rmsnorm.js";
export { concat, reshape, sliceRows, split, stack } from "./ops/shape.js";
export { siluSplit } from "./ops/silu-split.js";
export {
  type GpuSsdChunkedOptions,
  type GpuSsdScanResult,
  ssdScanChunked,
} from "./ops/ssd-scan-chunked.js";
export { exp, log, logsigmoid, neg, sigmoid, silu, softplus } from "./ops/unary.js";
export { GpuAdamW, type GpuNamedParameter } from "./optim/adamw.js";
export { clipGradNorm, gradNorm } from "./optim/clip.js";
export { backwardGpu, gpuNoGrad, zeroGpuGrads } from "./tape.js";
