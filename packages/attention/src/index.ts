export { type AttentionOptions, attention, flashBackward, flashForward } from "./attention.js";
export { type AttentionConfig, AttentionMixer } from "./attention-mixer.js";
export { attentionRef } from "./attention-ref.js";
export { type AttentionDims, attentionDims } from "./attention-shapes.js";
export type { ModuleInit } from "./init.js";
export { KvCache } from "./kv-cache.js";
export { type RopeOptions, rope, ropeInPlace, ropeTables } from "./rope.js";
export { swiglu } from "./swiglu.js";
export { type SwiGluConfig, SwiGluMlp } from "./swiglu-mlp.js";
