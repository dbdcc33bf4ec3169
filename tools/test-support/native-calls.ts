/**
 * Which native kernels an op really called: the golden tests of the native backend assert it, so
 * a native test cannot pass on the portable loops alone (a kernel skipped by a size threshold,
 * an unregistered set). Counts come from the kernel profile of `@loop/tensor/node`.
 */
import { startKernelProfile, stopKernelProfile } from "@loop/tensor/node";

/** Run `fn` and return what it returned with the sorted `group/name` of every native call. */
export function withNativeCalls<T>(fn: () => T): { result: T; calls: string[] } {
  startKernelProfile();
  let calls: string[] = [];
  try {
    const result = fn();
    calls = stopKernelProfile().map((e) => e.kernel.split(" ")[0]!);
    return { result, calls: [...new Set(calls)].sort() };
  } finally {
    stopKernelProfile();
  }
}
