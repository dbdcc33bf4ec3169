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
export { add, div, mul, sub } from "./ops/binary.js";
export { causalConv1dSiluSplit } from "./ops/conv-silu-split.js";
export { crossEntropy, crossEntropyPerToken, logSoftmax } from "./ops/cross-entropy.js";
export { scale } from "./ops/elementwise.js";
export { embedding } from "./ops/embedding.js";
export { exitPdf } from "./ops/exit-pdf.js";
export { gateLogits } from "./ops/gate-logits.js";
export { gatedRmsnorm } from "./ops/gated-rmsnorm.js";
export { splitKFor } from "./ops/gemm.js";
export { linearSplit } from "./ops/linear-split.js";
export { addDSkip, softplusBias } from "./ops/mamba2-ops.js";
export {
  type GpuMamba2State,
  type GpuMamba2StepConfig,
  type GpuMamba2StepWeights,
  mamba2StepState,
} from "./ops/mamba2-step.js";
export { linear, matmul } from "./ops/matmul.js";
export { mixtureLogits, mixtureLogProbs } from "./ops/mixture.js";
export { perStepCrossEntropy, perStepCrossEntropyDetached } from "./ops/per-step-ce.js";
export { mean, meanLast, sum, sumLast } from "./ops/reduce.js";
export { rmsnorm } from "./ops/rmsnorm.js";
export { rope, ropePair } from "./ops/rope.js";
export { scaleGradients } from "./ops/scale-grads.js";
export { concat, reshape, sliceRows, split, stack } from "./ops/shape.js";
export { siluSplit } from "./ops/silu-split.js";
export {
  type GpuSsdChunkedOptions,
  type GpuSsdScanResult,
  ssdScanChunked,
} from "./ops/ssd-scan-chunked.js";
export {
  detach,
  stage1Loss,
  stage1Objective,
  stage2Loss,
  stage2Objective,
} from "./ops/stage-losses.js";
export { swiglu } from "./ops/swiglu.js";
export { exp, log, logsigmoid, neg, sigmoid, silu, softplus } from "./ops/unary.js";
export { hasFeature } from "./precision.js";
export { gpuNoGrad } from "./tape.js";
