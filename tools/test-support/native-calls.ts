/**
 * Which native kernels an op really called: the golden tests of the native backend assert it, so
 * a native test cannot pass on the portable loops alone (a kernel skipped by a size threshold,
 * an unregistered set). Counts come from the kernel profile of `@loop/tensor/node`, which the
 * test passes in: this package sits below @loop/tensor (whose own tests use it).
 */

/** The kernel profile of `@loop/tensor/node` (its startKernelProfile and stopKernelProfile). */
export interface KernelProfile {
  startKernelProfile(): void;
  stopKernelProfile(): readonly { kernel: string }[];
}

/** Run `fn` and return what it returned with the sorted `group/name` of every native call. */
export function withNativeCalls<T>(
  profile: KernelProfile,
  fn: () => T,
): { result: T; calls: string[] } {
  profile.startKernelProfile();
  let calls: string[] = [];
  try {
    const result = fn();
    calls = profile.stopKernelProfile().map((e) => e.kernel.split(" ")[0]!);
    return { result, calls: [...new Set(calls)].sort() };
  } finally {
    profile.stopKernelProfile();
  }
}
