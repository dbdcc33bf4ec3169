/*
 * `@loop/webgpu/internal`: the WebGPU backend's individual ops on `GpuTensor`s (what
 * `gpuBackendOps` assembles), its tape (`backwardGpu`, `gpuNoGrad`, `gpuCheckpoint`) and the
 * decode-step state, for this project's op tests, oracles and benchmarks. Not the supported API:
 * these names and signatures change with the kernels; the main entry is.
 */
export { backwardGpu, zeroGpuGrads } from "./backward.js";
export { gpuCheckpoint } from "./checkpoint.js";
export { gpuParameter, transientCount } from "./gpu-tensor.js";
export { type AttentionOptions, attention } from "./ops/attention.js";
export { attendStep, type GpuKvCache } from "./ops/attention-decode.js";
export { add, binaryOp, div, mul, sub } from "./ops/binary.js";
export { causalConv1dSiluSplit } from "./ops/conv-silu-split.js";
export { crossEntropyPerToken, logSoftmax } from "./ops/cross-entropy.js";
export { affine, scale } from "./ops/elementwise.js";
export { embedding } from "./ops/embedding.js";
export { gatedRmsnorm } from "./ops/gated-rmsnorm.js";
export { splitKFor } from "./ops/gemm.js";
export { linearMulti } from "./ops/linear-multi.js";
export { linearSplit } from "./ops/linear-split.js";
export { addDSkip, softplusBias } from "./ops/mamba2-ops.js";
export {
  type GpuMamba2State,
  type GpuMamba2StepConfig,
  type GpuMamba2StepWeights,
  mamba2StepState,
} from "./ops/mamba2-step.js";
export { maskedMean } from "./ops/masked-mean.js";
export { linear, matmul } from "./ops/matmul.js";
export { mixtureLogits, mixtureLogProbs } from "./ops/mixture.js";
export { mean, meanLast, sum, sumLast } from "./ops/reduce.js";
export { rmsnorm } from "./ops/rmsnorm.js";
export { rope, ropeEach, ropePair } from "./ops/rope.js";
export { scaleGradients } from "./ops/scale-grads.js";
export {
  concat,
  concatLeading,
  reshape,
  sliceRows,
  split,
  splitLeading,
  stack,
} from "./ops/shape.js";
export { siluSplit } from "./ops/silu-split.js";
export {
  type GpuSsdChunkedOptions,
  type GpuSsdScanResult,
  ssdScanChunked,
} from "./ops/ssd-scan-chunked.js";
export { swiglu } from "./ops/swiglu.js";
export {
  exp,
  log,
  logsigmoid,
  neg,
  negExp,
  relu,
  sigmoid,
  silu,
  softplus,
  unary,
} from "./ops/unary.js";
export { hasFeature } from "./precision.js";
export { gpuNoGrad } from "./tape.js";
