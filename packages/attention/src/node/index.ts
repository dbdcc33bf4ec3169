/**
 * Node-only entry of @loop/attention: compile (first use only, cached) and switch on the native
 * attention kernels (native/attention.c). The portable kernels look them up by name
 * (`nativeKernel("attention/…")`) and use them when present; `LOOPLM_NATIVE=0` or a missing
 * compiler leaves the portable kernels.
 */
import { fileURLToPath } from "node:url";
import { registerNativeKernels } from "@loop/tensor";
import { buildNativeAddon, threadSynced } from "@loop/tensor/node";

export type AttentionNativeResult = { ok: true; path: string } | { ok: false; error: string };

export const attentionNativeSource = fileURLToPath(
  new URL("../../native/attention.c", import.meta.url),
);

/** Build, load and register the addon. */
export async function enableNativeAttentionKernels(): Promise<AttentionNativeResult> {
  const r = await buildNativeAddon<{ setThreads: (n: number) => void }>(
    "attention",
    attentionNativeSource,
  );
  if (!r.ok) return r;
  registerNativeKernels("attention", threadSynced(r.addon));
  return { ok: true, path: r.path };
}

/** Back to the portable kernels. */
export function disableNativeAttentionKernels(): void {
  registerNativeKernels("attention", null);
}
