/**
 * Native kernels of @loop/tensor (native/tensor.c): the GEMM behind every matmul, silu, RMSNorm,
 * the row copies of split/concat, cross-entropy, the embedding backward and the AdamW update,
 * compiled on first use by buildNativeAddon and registered for the portable code to
 * pick up. They run on as many OpenMP threads as the thread pool has (`threadCount()` at call
 * time), so `startThreadPool(n)` sets the threads of both.
 */
import { fileURLToPath } from "node:url";
import { type GemmFn, setGemm } from "../kernels/gemm.js";
import { registerNativeKernels } from "../native-registry.js";
import type { NativeBinarySame } from "../ops/binary.js";
import type { NativeCeBwd, NativeCeFwd } from "../ops/cross-entropy-kernels.js";
import type { NativeCopyRows, NativeSiluBwd, NativeSiluFwd } from "../ops/elementwise-kernels.js";
import type { EmbeddingBwd } from "../ops/embedding.js";
import type { RmsnormBwd, RmsnormFwd } from "../ops/rmsnorm.js";
import type { SiluRowsBwd, SiluRowsFwd } from "../ops/silu-split.js";
import type { NativeAdamw } from "../optim/adamw.js";
import { threadCount } from "../threads/pool.js";
import { type AddonResult, buildNativeAddon } from "./native-addon.js";

/** What the compiled addon exports (native/tensor.c). */
export interface TensorAddon {
  sgemm: GemmFn;
  siluFwd: NativeSiluFwd;
  siluBwd: NativeSiluBwd;
  binarySame: NativeBinarySame;
  siluRowsFwd: SiluRowsFwd;
  siluRowsBwd: SiluRowsBwd;
  copyRows: NativeCopyRows;
  rmsnormFwd: RmsnormFwd;
  rmsnormBwd: RmsnormBwd;
  adamw: NativeAdamw;
  ceFwd: NativeCeFwd;
  ceBwd: NativeCeBwd;
  embeddingBwd: EmbeddingBwd;
  /** GFLOP/s of `threads` threads each running `iters` rounds of FMA chains (fma-peak.h). */
  fmaPeak: (threads: number, iters: number) => number;
  /** The vector instructions of this build: avx512f, avx2+fma, neon or generic. */
  vectorIsa: () => string;
  setThreads: (n: number) => void;
}

export const tensorNativeSource = fileURLToPath(new URL("../../native/tensor.c", import.meta.url));

/**
 * Wrap every function of an addon so it first hands the current thread count to the addon's
 * `setThreads` (once per change).
 */
export function threadSynced<T extends { setThreads: (n: number) => void }>(
  addon: T,
): Record<string, unknown> {
  let last = 0;
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(addon)) {
    if (name === "setThreads" || typeof fn !== "function") continue;
    const f = fn as (...a: unknown[]) => unknown;
    out[name] = (...a: unknown[]) => {
      const t = threadCount();
      if (t !== last) {
        addon.setThreads(t);
        last = t;
      }
      return f(...a);
    };
  }
  return out;
}

export type NativeAddonsResult = { ok: true; paths: string[] } | { ok: false; error: string };

/**
 * Build and load every addon (`name` from `source`) and register each one's functions under
 * `prefix/` (thread-synced) — all of them, or, when one cannot be built, none (its reason is
 * returned). How the other packages' `/node` entries switch their kernels on.
 */
export async function enableNativeAddons(
  addons: readonly { prefix: string; source: string }[],
): Promise<NativeAddonsResult> {
  const built: { prefix: string; fns: Record<string, unknown>; path: string }[] = [];
  for (const { prefix, source } of addons) {
    const r = await buildNativeAddon<{ setThreads: (n: number) => void }>(prefix, source);
    if (!r.ok) return r;
    built.push({ prefix, fns: threadSynced(r.addon), path: r.path });
  }
  for (const b of built) registerNativeKernels(b.prefix, b.fns);
  return { ok: true, paths: built.map((b) => b.path) };
}

let previousGemm: ReturnType<typeof setGemm> | null = null;

/**
 * Compile (first time only) and switch on the native tensor kernels. Resolves to why not when
 * they cannot be built; the portable kernels then stay in place.
 */
export async function enableNativeTensorKernels(): Promise<AddonResult<TensorAddon>> {
  const r = await buildNativeAddon<TensorAddon>("tensor", tensorNativeSource);
  if (!r.ok) return r;
  const fns = threadSynced(r.addon);
  registerNativeKernels("tensor", fns);
  const prev = setGemm(fns.sgemm as GemmFn, "native");
  previousGemm ??= prev;
  return r;
}

/** Back to the portable kernels. */
export function disableNativeTensorKernels(): void {
  registerNativeKernels("tensor", null);
  if (previousGemm) setGemm(previousGemm.fn, previousGemm.name);
  previousGemm = null;
}
