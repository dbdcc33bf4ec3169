/**
 * Node-only entry of @loop/attention: compile (first use only, cached) and switch on the native
 * attention kernels (native/attention.c). The portable kernels look them up by name
 * (`nativeKernel("attention/…")`) and use them when present; `LOOPLM_NATIVE=0` or a missing
 * compiler leaves the portable kernels.
 */
import { fileURLToPath } from "node:url";
import { registerNativeKernels } from "@loop/tensor/kernel";
import { enableNativeAddons, type NativeAddonsResult } from "@loop/tensor/node";

export const attentionNativeSource = fileURLToPath(
  new URL("../../native/attention.c", import.meta.url),
);

/** Build, load and register the addon (its path, or why not). */
export function enableNativeAttentionKernels(): Promise<NativeAddonsResult> {
  return enableNativeAddons([{ prefix: "attention", source: attentionNativeSource }]);
}

/** Back to the portable kernels. */
export function disableNativeAttentionKernels(): void {
  registerNativeKernels("attention", null);
}
