/**
 * `@loop/webgpu`: the WebGPU backend. A `GpuContext` wraps one device; `GpuTensor`s live on it
 * for a whole training step; ops enqueue WGSL kernels and record their gradients on a GPU tape.
 * In a browser pass `navigator.gpu` to `requestGpuContext`; in Node use `@loop/webgpu/node`.
 */
export { isCpuEmulation } from "./adapter-kind.js";
export { backwardGpu, zeroGpuGrads } from "./backward.js";
export { gpuCheckpoint } from "./checkpoint.js";
export { type GemmProbeResult, gemmThroughput } from "./gemm-probe.js";
export { gpuBackendOps } from "./gpu-backend-ops.js";
export { type AdapterOffer, GpuContext, type GpuContextOptions } from "./gpu-context.js";
export type { GpuCounters, GpuEvent, GpuMemory } from "./gpu-counters.js";
export { zeroCounters } from "./gpu-counters.js";
export { type GpuPeak, measureGpuPeak } from "./gpu-peak.js";
export {
  type GpuDtype,
  GpuTensor,
  gpuParameter,
  releaseTransients,
  transientCount,
  uploadTensor,
} from "./gpu-tensor.js";
export { type GpuNamedParameter, type GpuTrainOptions, gpuTrainOps } from "./gpu-train-ops.js";
export { gpuModelOps } from "./model-ops.js";
export { type AttentionOptions, attention } from "./ops/attention.js";
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
export {
  type F16Storage,
  GPU_PRECISIONS,
  type GpuPrecision,
  gpuPrecision,
  hasFeature,
  type PrecisionSetting,
  setGpuPrecision,
} from "./precision.js";
export { requestGpuContext } from "./request-gpu-context.js";
export { gpuNoGrad } from "./tape.js";
