/*
 * The native kernels of @loop/ssm-kernels, as its portable kernels call them: group `ssm`
 * (native/ssm.c: conv1d, gated RMSNorm, small fused ops), group `ssd` (native/ssd.c: the
 * chunked SSD scan) and group `mamba2Step` (native/mamba2-step.c: the mixer's one-token decode
 * step in one call). The `/node` entry registers them; `kernelSet("ssm")` finds them.
 */
import type { ConvBwdNative, ConvFwdNative } from "./causal-conv1d.js";
import type { ConvSiluNative } from "./conv-silu-split.js";
import type { RmsnormBwdNative, RmsnormFwdNative } from "./gated-rmsnorm.js";
import type {
  DskipBwdNative,
  DskipFwdNative,
  SoftplusBwdNative,
  SoftplusFwdNative,
} from "./mamba2-ops.js";
import type { Mamba2StepNative } from "./mamba2-step.js";
import type {
  SsdBackwardGroupsNative,
  SsdBackwardHeadsNative,
} from "./ssd-chunked-backward-native.js";
import type { SsdForwardNative } from "./ssd-chunked-forward.js";

/**
 * The Mamba-2 elementwise kernels a native addon provides (conv1d, conv1d + silu, gated RMSNorm,
 * softplus, …), registered as the kernel set `ssm`.
 */
export interface SsmKernelSet {
  convFwd: ConvFwdNative;
  convBwd: ConvBwdNative;
  convSiluFwd: ConvSiluNative;
  convSiluBwd: ConvSiluNative;
  rmsnormFwd: RmsnormFwdNative;
  rmsnormBwd: RmsnormBwdNative;
  softplusFwd: SoftplusFwdNative;
  softplusBwd: SoftplusBwdNative;
  dskipFwd: DskipFwdNative;
  dskipBwd: DskipBwdNative;
}

/**
 * The SSD scan kernels a native addon provides (forward, per-head and per-group backward),
 * registered as the kernel set `ssd`.
 */
export interface SsdKernelSet {
  forward: SsdForwardNative;
  backwardHeads: SsdBackwardHeadsNative;
  backwardGroups: SsdBackwardGroupsNative;
}

export interface Mamba2StepKernelSet {
  step: Mamba2StepNative;
}

declare module "@loop/tensor/kernel" {
  interface NativeKernelSets {
    ssm: SsmKernelSet;
    ssd: SsdKernelSet;
    mamba2Step: Mamba2StepKernelSet;
  }
}
