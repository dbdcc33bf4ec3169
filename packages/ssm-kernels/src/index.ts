export {
  type ConvGrads,
  type ConvShape,
  causalConv1d,
  causalConv1dBackward,
  causalConv1dForward,
  causalConv1dState,
} from "./causal-conv1d.js";
export { causalConv1dSiluSplit } from "./conv-silu-split.js";
export { cpuMamba2Decode } from "./cpu-mamba2-decode.js";
export { cpuMamba2Ops } from "./cpu-mamba2-ops.js";
export { gatedRmsnorm, gatedRmsnormBackward, gatedRmsnormForward } from "./gated-rmsnorm.js";
export {
  type Mamba2Config,
  type Mamba2Dims,
  type Mamba2Weights,
  mamba2Dims,
} from "./mamba2-config.js";
export { initMamba2 } from "./mamba2-init.js";
export {
  type Mamba2MixOps,
  type Mamba2MixOptions,
  type Mamba2MixResult,
  mamba2Mix,
} from "./mamba2-mix.js";
export { Mamba2Mixer, type Mamba2Options, type Mamba2State } from "./mamba2-mixer.js";
export { addDSkip, softplusBias } from "./mamba2-ops.js";
export { mamba2StepRaw } from "./mamba2-step.js";
export { type Mamba2StepMixOps, mamba2StepMix } from "./mamba2-step-mix.js";
export type { SsdKernelSet, SsmKernelSet } from "./native-kernel-sets.js";
export { ssdChunkedBackward } from "./ssd-chunked-backward.js";
export { type SsdChunkedSaved, ssdChunkedForward } from "./ssd-chunked-forward.js";
export { type SsdChunkedOptions, ssdScanChunked } from "./ssd-scan-chunked.js";
export {
  type SsdScanOptions,
  type SsdScanResult,
  ssdScanRef,
  ssdScanRefBackward,
  ssdScanRefForward,
} from "./ssd-scan-ref.js";
export { type SsdArrays, type SsdGrads, type SsdShape, ssdShape } from "./ssd-shape.js";
