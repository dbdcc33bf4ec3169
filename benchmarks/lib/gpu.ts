/**
 * The WebGPU side of `pnpm bench … --backend webgpu`: one device for the whole run (Dawn through
 * @loop/webgpu/node), named with its adapter and driver, its fp32 peak (measured, or given with
 * `--gpu-peak-gflops`), and a timer that waits for the GPU: work is enqueued asynchronously, so
 * every timed run ends with `ctx.sync()`.
 */
import { readFileSync } from "node:fs";
import { type GpuContext, releaseTransients } from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";
import { type GpuPeak, measureGpuPeak } from "./gpu-peak.js";
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
   * Time `fn` (which enqueues GPU work; sync or async) until the GPU has finished it; the step's
   * transient tensors go back to the pool after each run (persistent ones, parameters, stay).
   */
  time(fn: () => unknown, opts?: TimeOptions): Promise<Timing>;
}

const EMULATORS = /swiftshader|lavapipe|llvmpipe/i;

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
  const emulated = EMULATORS.test(adapter);
  const peak: GpuPeak =
    opts.peakGflops !== undefined
      ? { gflops: opts.peakGflops, source: "given with --gpu-peak-gflops" }
      : await measureGpuPeak(ctx);
  return {
    ctx,
    adapter,
    driver: nvidiaDriver() ?? (adapter.match(/driver\s+\S+/i)?.[0] || "not reported"),
    emulated,
    peak,
    time: (fn, o) =>
      time(
        async () => {
          await fn();
          await ctx.sync();
          releaseTransients(ctx);
        },
        opts.quick ? { warmup: 1, repeats: 3, ...o } : o,
      ),
  };
}

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
