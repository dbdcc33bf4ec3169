/*
 * The umbrella package: every looplm package under one namespace each, the most used names
 * directly, and the command line's program builder.
 */
export * as attention from "@loop/attention";
export * as evaluation from "@loop/eval";
export { evaluateAccuracy, evaluatePerplexity } from "@loop/eval";
export * as exitGate from "@loop/exit-gate";
export * as looped from "@loop/looped";
export {
  countParameters,
  flopsPerToken,
  generate,
  LoopedModel,
  type ModelConfig,
  parseConfig,
  planIsoFlops,
  planIsoParameter,
} from "@loop/looped";
export * as ssm from "@loop/ssm-kernels";
export * as tasks from "@loop/tasks";
export { mano, pHop, type Task } from "@loop/tasks";
export * as tensor from "@loop/tensor";
export { backward, intTensor, noGrad, Rng, type Tensor } from "@loop/tensor";
export * as train from "@loop/train";
export { resolveTrainOptions, Trainer } from "@loop/train";
export { BACKENDS, type Backend, type ComputeBackend, startBackend } from "./backend.js";
export { FULL_CONFIGS as CHECK_SPEED_CONFIGS, type SpeedConfig } from "./check/speed-configs.js";
export { CliError } from "./cli/errors.js";
export { buildProgram } from "./cli/program.js";
export { parseForwardInputs } from "./forward/inputs.js";
export { forwardOutputs } from "./forward/outputs.js";
export {
  breakdownText,
  type DispatchBreakdown,
  type DispatchFormula,
  dispatchesAt,
  dispatchFormula,
  stepCounters,
} from "./gpu-dispatches.js";
export { disableNativeKernels, enableNativeKernels, type NativeReport } from "./native.js";
