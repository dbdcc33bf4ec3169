/*
 * Node-only entry of @loop/attention: compile (first use only, cached) and switch on the native
 * attention kernels (native/attention.c). They are registered as the kernel set `attention`
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

/**
 * Absolute path of the C source of the native attention kernels shipped with the package
 * (`native/attention.c`).
 */
export const attentionNativeSource = fileURLToPath(
  new URL("../../native/attention.c", import.meta.url),
);

const ATTENTION: NativeAddonSpec<"attention"> = {
  group: "attention",
  source: attentionNativeSource,
  kernels: { rope: true, flashFwd: true, flashBwd: true, swigluFwd: true, swigluBwd: true },
};

/** Build, load and register the addon (its path, or why not). */
export function enableNativeAttentionKernels(): Promise<NativeAddonsResult> {
  return enableNativeAddons([ATTENTION]);
}

/** Back to the portable kernels. */
export function disableNativeAttentionKernels(): void {
  registerKernelSet("attention", null);
}
