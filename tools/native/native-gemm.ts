/**
 * Load the PROTOTYPE native GEMM (see sgemm.c, build-native.ts) as a `GemmFn` running on a
 * given number of OpenMP threads, or report why it is unavailable.
 */
import { createRequire } from "node:module";
import type { GemmFn } from "@loop/tensor";
import { buildNativeGemm } from "./build-native.js";

type Sgemm = (...args: [...Parameters<GemmFn>, threads: number]) => void;

export type NativeGemm =
  | { ok: true; gemm: (threads: number) => GemmFn }
  | { ok: false; error: string };

export async function loadNativeGemm(): Promise<NativeGemm> {
  const built = await buildNativeGemm();
  // idle OpenMP threads sleep instead of spinning (spinning starves other work on shared cores)
  process.env.OMP_WAIT_POLICY ??= "passive";
  if (!built.ok) return built;
  try {
    const { sgemm } = createRequire(import.meta.url)(built.path) as { sgemm: Sgemm };
    return {
      ok: true,
      gemm:
        (threads) =>
        (...a) =>
          sgemm(...a, threads),
    };
  } catch (e) {
    return { ok: false, error: `loading ${built.path} failed: ${(e as Error).message}` };
  }
}
