/**
 * Optional native implementations of named kernels. The maths packages stay portable (they run
 * in a browser); a Node host may compile native kernels from source (`@loop/tensor/node`
 * `enableNativeKernels`, and the `/node` entries of other packages) and register them here.
 * A kernel asks `nativeKernel(name)` on each call and uses the native function when one is
 * registered, its own portable loops otherwise. Every native kernel is tested against the
 * portable one it replaces.
 */
const kernels = new Map<string, unknown>();

/** Register (or, with `null`, remove) the native functions of one addon under `prefix/`. */
export function registerNativeKernels(prefix: string, fns: Record<string, unknown> | null): void {
  for (const k of [...kernels.keys()]) if (k.startsWith(`${prefix}/`)) kernels.delete(k);
  if (fns === null) return;
  for (const [name, fn] of Object.entries(fns)) kernels.set(`${prefix}/${name}`, fn);
}

/** The native function registered as `prefix/name`, or undefined. */
export function nativeKernel<F>(name: string): F | undefined {
  return kernels.get(name) as F | undefined;
}

/** Names of the registered native kernels (for reports). */
export function nativeKernelNames(): string[] {
  return [...kernels.keys()].sort();
}
