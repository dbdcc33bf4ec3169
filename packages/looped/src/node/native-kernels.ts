/*
 * Switch every package's native kernels on or off in one call, here because this is the lowest
 * package whose dependencies hold all three kernel groups. Native kernels are C compiled
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

/** What `enableNativeKernels` did: whether the native kernels run, and why not. */
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

/**
 * Compile (first time; then cached) and register the native kernels of @loop/tensor,
 * @loop/ssm-kernels and @loop/attention, all or none: when one group cannot be built every group
 * goes back to the portable kernels and `reason` says why.
 */
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
