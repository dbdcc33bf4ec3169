/*
 * Switch every package's native kernels on or off in one call. Native kernels are C compiled
 * from source on this machine the first time (a few seconds, then cached; see @loop/tensor/node
 * buildNativeAddon): the GEMM and elementwise kernels of @loop/tensor, the Mamba-2 kernels of
 * @loop/ssm-kernels and the attention kernels of @loop/attention. When they cannot be built (no C compiler, no Node headers, or
 * LOOPLM_NATIVE=0) nothing changes and the portable kernels run; `reason` says why.
 */
import { disableNativeAttentionKernels, enableNativeAttentionKernels } from "@loop/attention/node";
import { disableNativeSsmKernels, enableNativeSsmKernels } from "@loop/ssm-kernels/node";
import { nativeKernelNames } from "@loop/tensor/kernel";
import {
  disableNativeTensorKernels,
  enableNativeTensorKernels,
  nativeDisabled,
} from "@loop/tensor/node";

export interface NativeReport {
  /** True when the native kernels are in use. */
  enabled: boolean;
  /** Why they are not (absent when enabled). */
  reason?: string;
  /** True when the user switched them off (LOOPLM_NATIVE=0): nothing to warn about. */
  switchedOff: boolean;
  /** Registered kernel names ("tensor/sgemm", "ssm/…"). */
  kernels: string[];
}

export async function enableNativeKernels(): Promise<NativeReport> {
  const switchedOff = nativeDisabled();
  const t = await enableNativeTensorKernels();
  const m = t.ok ? await enableNativeSsmKernels() : t;
  const s = m.ok ? await enableNativeAttentionKernels() : m;
  if (!s.ok) {
    disableNativeKernels();
    return { enabled: false, reason: s.error, switchedOff, kernels: [] };
  }
  return { enabled: true, switchedOff, kernels: nativeKernelNames() };
}

/** Back to the portable kernels everywhere. */
export function disableNativeKernels(): void {
  disableNativeTensorKernels();
  disableNativeSsmKernels();
  disableNativeAttentionKernels();
}
