/*
 * `@loop/tensor`: tensors, ops with their gradients, autograd, optimisers, RNG and safetensors.
 * Writing kernels (fused ops, GEMM, native twins, parallel kernels): `@loop/tensor/kernel`.
 */
export { type BackwardOptions, backward, grad } from "./autograd/backward.js";
export { checkpoint } from "./autograd/checkpoint.js";
export { releaseGrads } from "./autograd/leaf-grad.js";
export { enableGrad, isGradEnabled, noGrad } from "./autograd/node.js";
export type { AutogradOps } from "./backend/autograd-ops.js";
export type { BackendOps, KernelOps, StepOps } from "./backend/backend-ops.js";
export {
  BACKEND_FEATURES,
  type BackendCapabilities,
  type BackendFeature,
  decodeCapability,
  fusedComposites,
  STEP_POLICY_KINDS,
} from "./backend/capabilities.js";
export { crossEntropyOn, linearSplitOn } from "./backend/composites.js";
export { cpuTensorOps, cpuTransferOps } from "./backend/cpu-tensor-ops.js";
export { cpuAutograd, cpuTrainOps, exactNorm } from "./backend/cpu-train-ops.js";
export type {
  DecodeOps,
  DecodeRows,
  KvCacheState,
  Mamba2DecodeState,
  Mamba2StepSizes,
  Mamba2StepWeights,
} from "./backend/decode-ops.js";
export {
  AUTOGRAD_MEMBERS,
  KERNEL_OPS_MEMBERS,
  OPTIONAL_KERNEL_OPS_MEMBERS,
} from "./backend/kernel-members.js";
export {
  type AttentionKernelOptions,
  type AttentionOps,
  BINARY_KINDS,
  type BinaryKind,
  type Mamba2Ops,
  type ModelOps,
  type TensorOps,
  type TransferOps,
  UNARY_KINDS,
  type UnaryKind,
  type UploadOptions,
} from "./backend/model-ops.js";
export {
  DEFAULT_BETA,
  DEFAULT_GAMMA,
  DEFAULT_K,
  type GateLike,
  type ProjectedAttentionOptions,
  type SsdOptions,
  type SsdResult,
  type Stage1Options,
  type Stage2Options,
} from "./backend/op-options.js";
export { PRECISIONS, type Precision } from "./backend/precision.js";
export { checkHeadDim, type RopeOptions, ropeTables } from "./backend/rope-tables.js";
export type {
  AdamWStepConstants,
  DeviceTransfers,
  TrainOps,
  TrainParameter,
} from "./backend/train-ops.js";
export {
  type GradcheckEntry,
  type GradcheckOptions,
  type GradcheckResult,
  gradcheck,
} from "./gradcheck.js";
export {
  decodeSafetensors,
  encodeSafetensors,
  type NamedArray,
  type SafetensorsFile,
} from "./io/safetensors.js";
export { type Module, type NamedParameter, prefixed, weightLookup } from "./module.js";
export { add, div, mul, scale, sub } from "./ops/binary.js";
export { embedding } from "./ops/embedding.js";
export { linearSplit } from "./ops/linear-split.js";
export {
  countTargets,
  crossEntropy,
  crossEntropyPerToken,
  entropy,
  IGNORE_INDEX,
  logSoftmax,
} from "./ops/loss.js";
export {
  linear,
  type MatmulOptions,
  type MatmulShape,
  matmul,
  matmulShape,
} from "./ops/matmul.js";
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
  silu,
  softplus,
} from "./ops/unary.js";
export { AdamW, type AdamWOptions, type AdamWState } from "./optim/adamw.js";
export { AdamWCore } from "./optim/adamw-core.js";
export { clipGradNorm, gradNorm } from "./optim/clip.js";
export { clipGradients } from "./optim/device-clip.js";
export { type WarmupCosineOptions, warmupCosine } from "./optim/schedule.js";
export { deriveSeed, Rng, type RngState } from "./rng.js";
export { releaseScratch, withScratch } from "./scratch.js";
export type { SequenceMixer } from "./sequence-mixer.js";
export {
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
  type GovernorDecision,
  type GovernorOptions,
  installThreadGovernor,
  ThreadGovernor,
  threadGovernor,
} from "./threads/governor.js";
