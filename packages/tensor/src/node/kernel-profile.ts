/*
 * Where a step's time goes, kernel by kernel: while a profile is running, every call of a native
 * kernel (every addon's, registered through enableNativeAddons or enableNativeTensorKernels) is
 * timed and counted under `group/name` — GEMMs also under their shape, `tensor/sgemm NT
 * 4096×640×256` (op(A)·op(B), M×N×K), since one name covers products that differ 100× in cost.
 * Off (the default) it costs one null check per call. Wall-clock on the calling thread: a
 * kernel's own threads are inside its call.
 */

/** One kernel's (or GEMM shape's) share of a profile. */
export interface KernelProfileEntry {
  /** `group/name`, GEMMs with their layout and shape */
  kernel: string;
  calls: number;
  ms: number;
}

let running: Map<string, KernelProfileEntry> | null = null;

/** Start (or restart, from zero) timing every native kernel call. */
export function startKernelProfile(): void {
  running = new Map();
}

/** Stop timing; the entries since startKernelProfile, most time first ([] when none ran). */
export function stopKernelProfile(): KernelProfileEntry[] {
  const entries = running ? [...running.values()] : [];
  running = null;
  return entries.sort((a, b) => b.ms - a.ms);
}

/** The key of a call of kernel `name` of `group` with arguments `a` (sgemm: the GemmFn ones). */
function keyOf(group: string, name: string, a: readonly unknown[]): string {
  if (name !== "sgemm") return `${group}/${name}`;
  return `${group}/sgemm ${a[0] ? "T" : "N"}${a[1] ? "T" : "N"} ${a[2]}×${a[3]}×${a[4]}`;
}

/** `fn` of kernel `group/name` with its calls timed while a profile runs. */
export function profiled<F extends (...a: never[]) => unknown>(
  group: string,
  name: string,
  fn: F,
): F {
  return ((...a: Parameters<F>) => {
    if (running === null) return fn(...a);
    const t0 = performance.now();
    try {
      return fn(...a);
    } finally {
      const ms = performance.now() - t0;
      const key = keyOf(group, name, a);
      const e = running.get(key);
      if (e) {
        e.calls++;
        e.ms += ms;
      } else running.set(key, { kernel: key, calls: 1, ms });
    }
  }) as F;
}
