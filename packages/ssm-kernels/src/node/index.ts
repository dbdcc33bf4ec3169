/**
 * Node-only entry of @loop/ssm-kernels: compile (first use only, cached) and switch on the native
 * Mamba-2 kernels (native/ssm.c: conv1d, gated RMSNorm, small fused ops; native/ssd.c: the
 * chunked SSD scan). They are registered as the kernel sets `ssm` and `ssd`
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
export function ssmNativeSource(name: "ssm" | "ssd"): string {
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

/** Build, load and register both addons; on any failure none is registered. */
export function enableNativeSsmKernels(): Promise<NativeAddonsResult> {
  return enableNativeAddons([SSM, SSD]);
}

/** Back to the portable kernels. */
export function disableNativeSsmKernels(): void {
  registerKernelSet("ssm", null);
  registerKernelSet("ssd", null);
}
