/**
 * The WebGPU side of `pnpm bench … --backend webgpu`: one device for the whole run (Dawn through
 * @loop/webgpu/node), named with its adapter and driver, its fp32 peak (measured, or given with
 * `--gpu-peak-gflops`), and a timer that waits for the GPU: work is enqueued asynchronously, so
 * every timed run ends with `ctx.sync()`.
 */
import { readFileSync } from "node:fs";
import {
  type GpuContext,
  type GpuPeak,
  isCpuEmulation,
  measureGpuPeak,
  releaseTransients,
} from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";
import { type TimeOptions, type Timing, time } from "./timer.js";

export interface GpuBench {
  ctx: GpuContext;
  /** Vendor, architecture, device and description as the adapter reports them. */
  adapter: string;
  /** The kernel driver's version where the OS tells it (NVIDIA), else what the adapter says. */
  driver: string;
  /** A CPU emulation of a GPU (SwiftShader, lavapipe): its figures say nothing about GPUs. */
  emulated: boolean;
  peak: GpuPeak;
  /**
   * Time one call of `fn` (which enqueues GPU work; sync or async) until the GPU has finished
   * it: each timed sample runs `fn` as often as fills ≥ 20 ms and waits for the device once, so
   * short kernels are not measured as submit latency. The call's transient tensors go back to
   * the pool after it (persistent ones — inputs, parameters — stay).
   */
  time(fn: () => unknown, opts?: TimeOptions): Promise<Timing>;
}

function nvidiaDriver(): string | null {
  try {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 …"
    const line = readFileSync("/proc/driver/nvidia/version", "utf8").split("\n")[0] ?? "";
    const m = line.match(/Kernel Module\s+(\S+)/);
    return m ? `NVIDIA kernel module ${m[1]}` : null;
  } catch {
    return null;
  }
}

/**
 * Open the device or throw one sentence naming what is missing. `peakGflops` (from the command
 * line) replaces the measured peak.
 */
export async function openGpuBench(opts: {
  peakGflops?: number;
  quick: boolean;
}): Promise<GpuBench> {
  const ctx = await createNodeGpuContext();
  const adapter = ctx.adapterName;
  const emulated = isCpuEmulation(adapter);
  const peak: GpuPeak =
    opts.peakGflops !== undefined
      ? { gflops: opts.peakGflops, source: "given with --gpu-peak-gflops" }
      : await measureGpuPeak(ctx);
  return {
    ctx,
    adapter,
    driver:
      nvidiaDriver() ??
      (adapter.match(/\S+ driver \S+/i)?.[0] || "not reported apart from the adapter line"),
    emulated,
    peak,
    time: (fn, o) => timeGpu(ctx, fn, opts.quick ? { warmup: 1, repeats: 3, ...o } : o),
  };
}

/** Enough calls per timed run that a sample holds ≥ 20 ms of GPU work (submit and wait amortised). */
const SAMPLE_MS = 20;

async function timeGpu(ctx: GpuContext, fn: () => unknown, opts?: TimeOptions): Promise<Timing> {
  const once = async () => {
    await fn();
    // the pool hands the same buffers to the next call; the queue keeps the writes in order
    releaseTransients(ctx);
  };
  await once(); // compiles the pipelines
  await ctx.sync();
  const t0 = performance.now();
  await once();
  await ctx.sync();
  const single = performance.now() - t0;
  const calls = Math.min(1000, Math.max(1, Math.ceil(SAMPLE_MS / Math.max(single, 1e-3))));
  const t = await time(async () => {
    for (let i = 0; i < calls; i++) await once();
    await ctx.sync();
  }, opts);
  const per = (xs: number[]) => xs.map((x) => x / calls);
  return {
    medianMs: t.medianMs / calls,
    minMs: t.minMs / calls,
    maxMs: t.maxMs / calls,
    samplesMs: per(t.samplesMs),
    cpuMs: t.cpuMs / calls,
    cpuSamplesMs: per(t.cpuSamplesMs),
  };
}

/** Three significant digits (GPU and emulator figures span six orders of magnitude). */
export const sig = (x: number): number => Number(x.toPrecision(3));

/** The lines printed once at the start of a webgpu run. */
export function describeGpu(g: GpuBench): string[] {
  const lines = [
    `webgpu adapter: ${g.adapter}`,
    `webgpu driver: ${g.driver}`,
    `webgpu fp32 peak: ${g.peak.gflops.toFixed(0)} GFLOP/s (${g.peak.source})`,
  ];
  if (g.emulated)
    lines.push(
      "WARNING: this adapter is a CPU emulation of a GPU (SwiftShader/lavapipe): the webgpu " +
        "figures below measure the emulator on this CPU, not a GPU; only correctness counts here",
    );
  return lines;
}
