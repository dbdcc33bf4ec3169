export { type AttentionOptions, attention } from "./attention.js";
export { type FlashBackwardArgs, flashBackward } from "./attention-backward.js";
export { type FlashForwardArgs, flashForward } from "./attention-forward.js";
export {
  type AttentionMixOps,
  type AttentionMixOptions,
  attentionMix,
  type SwiGluMixOps,
  swigluMix,
} from "./attention-mix.js";
export { type AttentionConfig, AttentionMixer, attentionProjDims } from "./attention-mixer.js";
export { attentionRef } from "./attention-ref.js";
export { type AttentionDims, attentionDims } from "./attention-shapes.js";
export { type AttentionStepMixOps, attentionStepMix } from "./attention-step-mix.js";
export { cpuAttendStep } from "./cpu-attend-step.js";
export { cpuAttentionOps } from "./cpu-attention-ops.js";
export type { ModuleInit } from "./init.js";
export { KvCache } from "./kv-cache.js";
export type { AttentionKernelSet } from "./native-kernel-sets.js";
export { type ProjectedAttentionOptions, projectedAttention } from "./projected-attention.js";
export {
  type ProjectedAttentionKernels,
  projectedAttentionOn,
} from "./projected-attention-on.js";
export { type RopeOptions, rope, ropeInPlace, ropeTables } from "./rope.js";
export { swiglu } from "./swiglu.js";
export { type SwiGluConfig, SwiGluMlp } from "./swiglu-mlp.js";
