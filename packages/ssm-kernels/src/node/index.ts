/**
 * Node-only entry of @loop/ssm-kernels: compile (first use only, cached) and switch on the native
 * Mamba-2 kernels (native/ssm.c: conv1d, gated RMSNorm, small fused ops; native/ssd.c: the
 * chunked SSD scan). The portable kernels look them up by name (`nativeKernel("ssm/…")`) and use
 * them when present; `LOOPLM_NATIVE=0` or a missing compiler leaves the portable kernels.
 */
import { fileURLToPath } from "node:url";
import { registerNativeKernels } from "@loop/tensor/kernel";
import { enableNativeAddons, type NativeAddonsResult } from "@loop/tensor/node";

const ADDONS = ["ssm", "ssd"] as const;

/** Source file of one addon. */
export function ssmNativeSource(name: (typeof ADDONS)[number]): string {
  return fileURLToPath(new URL(`../../native/${name}.c`, import.meta.url));
}

/** Build, load and register both addons; on any failure none is registered. */
export function enableNativeSsmKernels(): Promise<NativeAddonsResult> {
  return enableNativeAddons(
    ADDONS.map((name) => ({ prefix: name, source: ssmNativeSource(name) })),
  );
}

/** Back to the portable kernels. */
export function disableNativeSsmKernels(): void {
  for (const name of ADDONS) registerNativeKernels(name, null);
}
