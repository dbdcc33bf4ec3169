/*
 * Optional native implementations of the kernels, grouped in typed kernel sets. The maths
 * packages stay portable (they run in a browser); a Node host may compile native kernels from
 * source (`@loop/tensor/node` `enableNativeTensorKernels`, and the `/node` entries of other
 * packages) and register them here as one set per group. A kernel asks `kernelSet(group)` on
 * each call and uses the native function when its set is registered, its own portable loops
 * otherwise. Every native kernel is tested against the portable one it replaces.
 *
 * The groups are the keys of `NativeKernelSets`: each package declares its own by module
 * augmentation next to its kernels, so a missing or misspelt kernel is a compile error both
 * where a set is registered and where a kernel is used.
 *
 *   declare module "@loop/tensor/kernel" {
 *     interface NativeKernelSets { ssd: SsdKernelSet }
 *   }
 */
import { currentGemm, type GemmFn, setGemm } from "./kernels/gemm.js";
import type { TensorKernelSet } from "./tensor-kernel-set.js";

/** Group name → the functions its native addon provides (packages add their groups). */
export interface NativeKernelSets {
  tensor: TensorKernelSet;
}

/** The name of a kernel group in the native registry (`tensor`, `ssm`, `ssd`, `attention`, …). */
export type KernelGroup = keyof NativeKernelSets;

type Sets = Map<KernelGroup, NativeKernelSets[KernelGroup]>;
let sets: Sets = new Map();

/** Register the native kernels of `group`, or with `null` go back to its portable kernels. */
export function registerKernelSet<G extends KernelGroup>(
  group: G,
  set: NativeKernelSets[G] | null,
): void {
  if (set === null) sets.delete(group);
  else sets.set(group, set);
}

/** The registered native kernels of `group`, or undefined (then the portable kernels run). */
export function kernelSet<G extends KernelGroup>(group: G): NativeKernelSets[G] | undefined {
  return sets.get(group) as NativeKernelSets[G] | undefined;
}

/** "group/kernel" for every registered native function (for reports). */
export function nativeKernelNames(): string[] {
  const names: string[] = [];
  for (const [group, set] of sets)
    for (const [name, fn] of Object.entries(set))
      if (typeof fn === "function") names.push(`${group}/${name}`);
  return names.sort();
}

/** The CPU kernels of a backend as a value: the registered sets and the GEMM, as they were. */
export interface CpuKernels {
  readonly sets: ReadonlyMap<KernelGroup, NativeKernelSets[KernelGroup]>;
  readonly gemm: { readonly fn: GemmFn; readonly name: string };
}

/** The CPU kernels in use now (what `withKernels` installs again later). */
export function currentKernels(): CpuKernels {
  return { sets: new Map(sets), gemm: currentGemm() };
}

/**
 * `fn()` on `kernels`, whatever the registry holds: they are installed for the synchronous call
 * and the registry's own are put back after it (calls nest). What `fn` leaves to run later (a
 * promise's continuation) runs on the registry's: an async path wraps each synchronous stretch.
 * Without `kernels`, `fn()` runs on what the registry holds.
 */
export function withKernels<R>(kernels: CpuKernels | null | undefined, fn: () => R): R {
  if (!kernels) return fn();
  const before = sets;
  sets = kernels.sets as Sets;
  const gemm = setGemm(kernels.gemm.fn, kernels.gemm.name);
  try {
    return fn();
  } finally {
    sets = before;
    setGemm(gemm.fn, gemm.name);
  }
}
