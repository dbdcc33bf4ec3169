/*
 * Node-only entry of @loop/ssm-kernels: compile (first use only, cached) and switch on the native
 * Mamba-2 kernels (native/ssm.c: conv1d, gated RMSNorm, small fused ops; native/ssd.c: the
 * chunked SSD scan; native/mamba2-step.c: the one-token decode step). They are registered as the
 * kernel sets `ssm`, `ssd` and `mamba2Step`
 * (native-kernel-sets.ts), which the portable kernels use when present; `LOOPLM_NATIVE=0` or a
 * missing compiler leaves the portable kernels.
 */
import { fileURLToPath } from "node:url";
import { registerKernelSet } from "@loop/tensor/kernel";
import {
  enableNativeAddons,
  type NativeAddonSpec,
  type NativeAddonsResult,
} from "@loop/tensor/node";
import "../native-kernel-sets.js";

/** Source file of one addon. */
export function ssmNativeSource(name: "ssm" | "ssd" | "mamba2-step"): string {
  return fileURLToPath(new URL(`../../native/${name}.c`, import.meta.url));
}

const SSM: NativeAddonSpec<"ssm"> = {
  group: "ssm",
  source: ssmNativeSource("ssm"),
  kernels: {
    convFwd: true,
    convBwd: true,
    convSiluFwd: true,
    convSiluBwd: true,
    rmsnormFwd: true,
    rmsnormBwd: true,
    softplusFwd: true,
    softplusBwd: true,
    dskipFwd: true,
    dskipBwd: true,
  },
};

const SSD: NativeAddonSpec<"ssd"> = {
  group: "ssd",
  source: ssmNativeSource("ssd"),
  kernels: { forward: true, backwardHeads: true, backwardGroups: true },
};

const STEP: NativeAddonSpec<"mamba2Step"> = {
  group: "mamba2Step",
  source: ssmNativeSource("mamba2-step"),
  kernels: { step: true },
};

/** Build, load and register the three addons; on any failure none is registered. */
export function enableNativeSsmKernels(): Promise<NativeAddonsResult> {
  return enableNativeAddons([SSM, SSD, STEP]);
}

/** Back to the portable kernels. */
export function disableNativeSsmKernels(): void {
  registerKernelSet("ssm", null);
  registerKernelSet("ssd", null);
  registerKernelSet("mamba2Step", null);
}
