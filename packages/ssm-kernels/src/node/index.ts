/**
 * Node-only entry of @loop/ssm-kernels: compile (first use only, cached) and switch on the native
 * Mamba-2 kernels (native/ssm.c: conv1d, gated RMSNorm, small fused ops; native/ssd.c: the
 * chunked SSD scan). The portable kernels look them up by name (`nativeKernel("ssm/…")`) and use
 * them when present; `LOOPLM_NATIVE=0` or a missing compiler leaves the portable kernels.
 */
import { fileURLToPath } from "node:url";
import { registerNativeKernels } from "@loop/tensor";
import { buildNativeAddon, threadSynced } from "@loop/tensor/node";

const ADDONS = ["ssm", "ssd"] as const;

export type SsmNativeResult = { ok: true; paths: string[] } | { ok: false; error: string };

/** Source file of one addon. */
export function ssmNativeSource(name: (typeof ADDONS)[number]): string {
  return fileURLToPath(new URL(`../../native/${name}.c`, import.meta.url));
}

/** Build, load and register both addons; on any failure none is registered. */
export async function enableNativeSsmKernels(): Promise<SsmNativeResult> {
  const paths: string[] = [];
  const fns: Record<string, Record<string, unknown>> = {};
  for (const name of ADDONS) {
    const r = await buildNativeAddon<{ setThreads: (n: number) => void }>(
      name,
      ssmNativeSource(name),
    );
    if (!r.ok) return r;
    paths.push(r.path);
    fns[name] = threadSynced(r.addon);
  }
  for (const name of ADDONS) registerNativeKernels(name, fns[name]!);
  return { ok: true, paths };
}

/** Back to the portable kernels. */
export function disableNativeSsmKernels(): void {
  for (const name of ADDONS) registerNativeKernels(name, null);
}
