/*
 * The fp32 peak of this machine for the native build, measured rather than assumed: the
 * tensor addon's FMA loop (native/fma-peak.h) on `threads` threads, each thread's flops over its
 * own CPU time, summed — so other jobs on the machine, which take turns on the cores, barely
 * move it — best of a few runs long enough (tens of ms) for turbo and thread start-up to settle.
 * What "% peak" in the benchmarks divides by.
 */
import { type TensorAddon, tensorNativeSource } from "./native.js";
import { buildNativeAddon } from "./native-addon.js";

/**
 * What `measureFmaPeak` found: GFLOP/s with the thread count and vector ISA, or why it could not
 * run.
 */
export type FmaPeak =
  | { ok: true; gflops: number; threads: number; isa: string }
  | { ok: false; error: string };

/** How long `measureFmaPeak` measures: the time of one run and the number of runs. */
export interface FmaPeakOptions {
  /** Wall time of one timed run (default 40 ms). */
  runMs?: number;
  /** Timed runs; the best is kept (default 5). */
  repeats?: number;
}

/**
 * The machine's peak fused multiply-add rate on `threads` threads, measured by the native addon (a
 * ceiling for GEMM speed figures).
 */
export async function measureFmaPeak(threads: number, opts: FmaPeakOptions = {}): Promise<FmaPeak> {
  if (!Number.isInteger(threads) || threads < 1)
    throw new RangeError(`measureFmaPeak: threads must be a positive integer, got ${threads}`);
  const built = await buildNativeAddon<TensorAddon>("tensor", tensorNativeSource);
  if (!built.ok) return built;
  const { fmaPeak, vectorIsa } = built.addon;
  const runMs = opts.runMs ?? 40;
  // grow the round count until one run lasts runMs (the first runs also warm the threads up)
  let iters = 1 << 12;
  for (;;) {
    const t0 = performance.now();
    fmaPeak(threads, iters);
    const ms = performance.now() - t0;
    if (ms >= runMs || iters >= 1 << 30) break;
    iters = Math.min(
      1 << 30,
      Math.ceil(iters * Math.min(16, Math.max(2, runMs / Math.max(ms, 1e-3)))),
    );
  }
  let gflops = 0;
  for (let i = 0; i < (opts.repeats ?? 5); i++) gflops = Math.max(gflops, fmaPeak(threads, iters));
  return { ok: true, gflops, threads, isa: vectorIsa() };
}

/**
 * The vector instructions of this machine's native build (avx512f, avx2+fma, neon, generic), or
 * null where it does not build: what the native backend's last digits depend on.
 */
export async function nativeVectorIsa(): Promise<string | null> {
  const built = await buildNativeAddon<TensorAddon>("tensor", tensorNativeSource);
  return built.ok ? built.addon.vectorIsa() : null;
}
