export {
  countParameters,
  type FlopBreakdown,
  type FlopOptions,
  type FlopSource,
  flopsPerToken,
  type ParameterSource,
} from "./accounting.js";
export { CHECKPOINTING_MODES, type Checkpointing } from "./checkpointing.js";
export {
  type AttentionSettings,
  BACKBONES,
  type Backbone,
  configToJson,
  DEFAULT_ATTENTION,
  DEFAULT_SSM,
  isAttentionLayer,
  type MlpSettings,
  type ModelConfig,
  type ModelConfigInput,
  makeConfig,
  NORM_GROUPS,
  type NormGroups,
  OUT_PROJ_SCALES,
  type OutProjScale,
  parseConfig,
  residualInitLayers,
  type SsmSettings,
} from "./config.js";
export { cpuBackendOps, cpuBackendOpsOn } from "./cpu-backend-ops.js";
export { cpuCapabilities } from "./cpu-capabilities.js";
export {
  type DecodeState,
  type DecodeStepResult,
  decodeStep,
  initDecodeState,
  sampleToken,
} from "./decode.js";
export { type DecodeClock, type DecodeTiming, decodeClock } from "./decode-clock.js";
export {
  addEarlyExitCounts,
  decodeStepEarlyExit,
  type EarlyExitCounts,
  type EarlyExitOptions,
  type EarlyExitStepResult,
  earlyExitSettings,
  emptyEarlyExitCounts,
} from "./decode-early-exit.js";
export {
  type DecodeBackendOps,
  type DeviceDecodeState,
  type DeviceLayerState,
  type DeviceTokenResult,
  deviceDecodeToken,
  disposeDeviceDecodeState,
  hasDecodeOps,
  initDeviceDecodeState,
} from "./device-decode.js";
export { generateOn } from "./device-generate.js";
export {
  type DeviceForwardOptions,
  DeviceModel,
  type DeviceModelOps,
  type DeviceParameter,
  toDevice,
} from "./device-model.js";
export { devicePrefill, stateTensors } from "./device-prefill.js";
export {
  checkGenerateOptions,
  type GenerateOptions,
  type GenerateResult,
  generate,
  generateTokens,
  type StepPolicy,
} from "./generate.js";
export {
  fromHfMamba2Config,
  HF_MAMBA2_FIELDS,
  type HfMamba2Options,
  isHfMamba2Config,
  toHfMamba2Config,
} from "./hf-config.js";
export { Layer, type LayerState } from "./layer.js";
export { keepSteps, type LoopHooks, type LoopModel, runLoop, type StepOutputsOf } from "./loop.js";
export {
  builtinMix,
  type LayerMix,
  type LoopedCore,
  type LoopedForwardOptions,
  layerForward,
  loopedCore,
  loopedForward,
  type WeightLookup,
} from "./looped-forward.js";
export { attentionConfig, mamba2Config } from "./mixer-configs.js";
export type { MixerContext, MixerFactory } from "./mixer-factory.js";
export {
  type ForwardOptions,
  type ForwardResult,
  LoopedModel,
  type ModelOptions,
} from "./model.js";
export { prefill } from "./prefill.js";
export { type EarlyExitPrefillResult, prefillEarlyExit } from "./prefill-early-exit.js";
export { formatPlan, type PlanRow, planIsoFlops, planIsoParameter } from "./protocols.js";
export { parsePythonJson, pythonJson } from "./python-json.js";
export { isBlockParameter, type ParamSpec, parameterSpecs } from "./shapes.js";
export { loadStateDict, stateDict } from "./state-dict.js";
export { withExitGate } from "./with-exit-gate.js";
