/*
 * Native kernels of @loop/tensor (native/tensor.c): the GEMM behind every matmul, silu, RMSNorm,
 * the row copies of split/concat, cross-entropy, the embedding backward and the AdamW update,
 * compiled on first use by buildNativeAddon and registered for the portable code to
 * pick up. They run on as many OpenMP threads as the thread pool has (`threadCount()` at call
 * time), so `startThreadPool(n)` sets the threads of both.
 */
import { fileURLToPath } from "node:url";
import { setGemm } from "../kernels/gemm.js";
import { type KernelGroup, type NativeKernelSets, registerKernelSet } from "../native-registry.js";
import type { TensorKernelSet } from "../tensor-kernel-set.js";
import { threadCount } from "../threads/pool.js";
import { profiled } from "./kernel-profile.js";
import { type AddonResult, buildNativeAddon } from "./native-addon.js";

/** Every addon sets the OpenMP thread count of its kernels. */
interface Threaded {
  setThreads: (n: number) => void;
}

/** What the compiled addon exports (native/tensor.c). */
export interface TensorAddon extends TensorKernelSet, Threaded {
  /** GFLOP/s of `threads` threads each running `iters` rounds of FMA chains (fma-peak.h). */
  fmaPeak: (threads: number, iters: number) => number;
  /** The vector instructions of this build: avx512f, avx2+fma, neon or generic. */
  vectorIsa: () => string;
}

/**
 * Absolute path of the C source of the native tensor kernels shipped with the package
 * (`native/tensor.c`).
 */
export const tensorNativeSource = fileURLToPath(new URL("../../native/tensor.c", import.meta.url));

/**
 * `set` with every function wrapped to first hand the current thread count to `setThreads`
 * (once per change), and timed under `group/name` while a kernel profile runs
 * (kernel-profile.ts).
 */
function threadSynced<S extends object>(
  set: S,
  setThreads: (n: number) => void,
  group = "native",
): S {
  let last = 0;
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(set)) {
    if (typeof fn !== "function") continue;
    const f = fn as (...a: unknown[]) => unknown;
    out[name] = profiled(group, name, (...a: unknown[]) => {
      const t = threadCount();
      if (t !== last) {
        setThreads(t);
        last = t;
      }
      return f(...a);
    });
  }
  return out as S;
}

/**
 * One native addon: the C source of kernel group `group` and the names of the kernels it must
 * export — every kernel of the group's `NativeKernelSets` entry, so the compiler checks the list.
 */
export interface NativeAddonSpec<G extends KernelGroup = KernelGroup> {
  group: G;
  source: string;
  kernels: Record<keyof NativeKernelSets[G], true>;
}

/** `addon`'s kernels of `spec` (thread-synced), or the first one it lacks. */
function kernelSetOf<G extends KernelGroup>(
  spec: NativeAddonSpec<G>,
  addon: Threaded,
): { ok: true; set: NativeKernelSets[G] } | { ok: false; error: string } {
  const fns = addon as unknown as Record<string, unknown>;
  const set: Record<string, unknown> = {};
  for (const name of Object.keys(spec.kernels)) {
    if (typeof fns[name] !== "function")
      return { ok: false, error: `${spec.source} does not export the kernel ${name}` };
    set[name] = fns[name];
  }
  return {
    ok: true,
    set: threadSynced(set as unknown as NativeKernelSets[G], addon.setThreads, spec.group),
  };
}

/** Whether a set of native addons was built and registered (their paths), or why not. */
export type NativeAddonsResult = { ok: true; paths: string[] } | { ok: false; error: string };

/**
 * Build and load every addon and register each one's kernel set — all of them, or, when one
 * cannot be built, none (its reason is returned). How the other packages' `/node` entries switch
 * their kernels on.
 */
export async function enableNativeAddons(
  addons: readonly NativeAddonSpec[],
): Promise<NativeAddonsResult> {
  const built: { register: () => void; path: string }[] = [];
  for (const spec of addons) {
    const r = await buildNativeAddon<Threaded>(spec.group, spec.source);
    if (!r.ok) return r;
    const s = kernelSetOf(spec, r.addon);
    if (!s.ok) return s;
    built.push({ register: () => registerKernelSet(spec.group, s.set), path: r.path });
  }
  for (const b of built) b.register();
  return { ok: true, paths: built.map((b) => b.path) };
}

/** The kernels of native/tensor.c that the ops use. */
export const TENSOR_KERNELS: NativeAddonSpec<"tensor">["kernels"] = {
  sgemm: true,
  siluFwd: true,
  siluBwd: true,
  binarySame: true,
  siluRowsFwd: true,
  siluRowsBwd: true,
  copyRows: true,
  rmsnormFwd: true,
  rmsnormBwd: true,
  adamw: true,
  ceFwd: true,
  ceBwd: true,
  embeddingBwd: true,
};

let previousGemm: ReturnType<typeof setGemm> | null = null;

/**
 * Compile (first time only) and switch on the native tensor kernels. Resolves to why not when
 * they cannot be built; the portable kernels then stay in place.
 */
export async function enableNativeTensorKernels(): Promise<AddonResult<TensorAddon>> {
  const r = await buildNativeAddon<TensorAddon>("tensor", tensorNativeSource);
  if (!r.ok) return r;
  const spec = { group: "tensor", source: tensorNativeSource, kernels: TENSOR_KERNELS } as const;
  const s = kernelSetOf(spec, r.addon);
  if (!s.ok) return s;
  registerKernelSet("tensor", s.set);
  const prev = setGemm(s.set.sgemm, "native");
  previousGemm ??= prev;
  return r;
}

/** Back to the portable kernels. */
export function disableNativeTensorKernels(): void {
  registerKernelSet("tensor", null);
  if (previousGemm) setGemm(previousGemm.fn, previousGemm.name);
  previousGemm = null;
}
