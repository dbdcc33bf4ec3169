/**
 * The table every `--backend webgpu` workload prints: each case timed on the GPU and on the
 * native CPU kernels (all cores asked for, `enableNativeKernels`) in the same run, as tokens/s,
 * GFLOP/s, the fraction of the GPU's fp32 peak, and the speed-up GPU / CPU.
 */
import { disableNativeKernels, enableNativeKernels } from "looplm";
import type { BenchContext } from "./context.js";
import { type GpuBench, sig } from "./gpu.js";
import type { Row } from "./table.js";
import type { TimeOptions } from "./timer.js";

export interface GpuCase {
  /** The case's name in the first column. */
  label: string;
  /** Tokens (B·T) one call processes. */
  tokens: number;
  /** Floating-point operations of one call (the benchmark's own accounting, documented there). */
  flops: number;
  /** One call on the GPU (enqueues; the timer waits for the device). */
  gpu: () => unknown;
  /** The same work on the CPU kernels (null: not measured, e.g. too slow for the CPU). */
  cpu: (() => unknown) | null;
}

export async function compareWithNative(
  ctx: BenchContext,
  gpu: GpuBench,
  key: string,
  cases: readonly GpuCase[],
  timing: TimeOptions,
): Promise<Row[]> {
  const threads = Math.max(...ctx.threadCounts);
  const native = await enableNativeKernels();
  if (!native.enabled)
    ctx.log(`native kernels unavailable (${native.reason}): portable CPU kernels`);
  const kernels = native.enabled ? "native" : "portable";
  await ctx.setThreads(threads);
  const rows: Row[] = [];
  try {
    for (const c of cases) {
      const g = await gpu.time(c.gpu, timing);
      const gGflops = c.flops / g.medianMs / 1e6;
      const row: Row = {
        [key]: c.label,
        "webgpu ms": sig(g.medianMs),
        "webgpu tok/s": Math.round((c.tokens / g.medianMs) * 1000),
        "webgpu GFLOP/s": sig(gGflops),
        "% GPU peak": sig((100 * gGflops) / gpu.peak.gflops),
      };
      if (c.cpu) {
        const t = await ctx.time(c.cpu, timing);
        row[`${kernels} ${threads}T ms`] = sig(t.medianMs);
        row[`${kernels} tok/s`] = Math.round((c.tokens / t.medianMs) * 1000);
        row[`${kernels} GFLOP/s`] = sig(c.flops / t.medianMs / 1e6);
        row[`webgpu/${kernels}`] = sig(t.medianMs / g.medianMs);
      }
      rows.push(row);
    }
  } finally {
    disableNativeKernels();
  }
  return rows;
}
