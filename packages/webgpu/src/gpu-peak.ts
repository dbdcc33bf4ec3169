/*
 * The fp32 peak of a WebGPU device, measured the way the benchmarks measure the CPU's: a loop of
 * independent fused multiply-adds that no memory access slows down. Each thread runs `iters`
 * iterations of 8 independent vec4 FMA chains (a ← a·m + c; 8·4 = 32 FMAs, 64 flops an
 * iteration), enough independent work to hide the FMA latency on every GPU we know of, and writes
 * its sum so that no compiler can drop the loop. `m` and `c` are uniforms, so the loop cannot be
 * folded at compile time. What it reaches is the device's practical fp32 peak; a GPU's data-sheet
 * figure (`--gpu-peak-gflops`) can replace it.
 */
import type { GpuContext } from "./gpu-context.js";
import { defineKernel, flatIndex, grid } from "./kernel.js";

/** Threads per workgroup of the peak kernel. */
export const PEAK_GROUP = 256;
/** Independent FMA chains per thread (enough to hide the FMA latency). */
export const PEAK_CHAINS = 8;
/** Flops of one thread's iteration: chains × 4 lanes × (multiply + add). */
export const FLOPS_PER_ITER = PEAK_CHAINS * 4 * 2;

const chains = Array.from({ length: PEAK_CHAINS }, (_, k) => k);

/** The FMA loop (see the file comment). */
export const fmaPeakKernel = defineKernel({
  name: "fmaPeak",
  params: { n: "u32", iters: "u32", m: "f32", c: "f32" },
  buffers: { out: "rw" },
  body: `@compute @workgroup_size(${PEAK_GROUP})
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) ng: vec3u) {
  let i = ${flatIndex(PEAK_GROUP)};
  if (i >= p.n) { return; }
  let m = vec4f(p.m);
  let c = vec4f(p.c);
  let s = f32(i % 8u) * 0.125;
${chains.map((k) => `  var a${k} = vec4f(s, s + ${k}.0, s + 0.5, s + ${k}.5);`).join("\n")}
  for (var k = 0u; k < p.iters; k++) {
${chains.map((k) => `    a${k} = fma(a${k}, m, c);`).join("\n")}
  }
  out[i] = dot(${chains.map((k) => `a${k}`).join(" + ")}, vec4f(1.0));
}`,
});

/** What one thread of the kernel writes (for the test), in f32 arithmetic. */
export function fmaPeakReference(i: number, iters: number, m: number, c: number): number {
  const f = Math.fround;
  const s = f((i % 8) * 0.125);
  let total = 0;
  const lanes = chains.map((k) => [s, f(s + k), f(s + 0.5), f(s + k + 0.5)]);
  for (let it = 0; it < iters; it++)
    for (const lane of lanes) for (let j = 0; j < 4; j++) lane[j] = f(lane[j]! * m + c);
  for (let j = 0; j < 4; j++) {
    let acc = 0;
    for (const lane of lanes) acc = f(acc + lane[j]!);
    total = f(total + acc);
  }
  return total;
}

/** Enqueue one run of the kernel over `threads` threads (the caller flushes and times). */
export function runFmaPeak(ctx: GpuContext, out: GPUBuffer, threads: number, iters: number): void {
  // m < 1 with c = 1 − m keeps every chain near 1 whatever the iteration count.
  ctx.run(
    fmaPeakKernel,
    { out },
    { n: threads, iters, m: 0.999, c: 0.001 },
    grid(threads, PEAK_GROUP),
  );
}

/** A device's fp32 peak and how it was found. */
export interface GpuPeak {
  gflops: number;
  source: string;
}

/**
 * The measured peak: 2^20 threads (several per core of the largest GPUs), the iteration count
 * doubled until one run takes ≥ `minMs` (100 ms), then the best of 5 runs.
 */
export async function measureGpuPeak(
  ctx: GpuContext,
  opts: { minMs?: number } = {},
): Promise<GpuPeak> {
  const minMs = opts.minMs ?? 100;
  const threads = 1 << 20;
  const out = ctx.allocBytes(threads * 4);
  const once = async (iters: number): Promise<number> => {
    const t0 = performance.now();
    runFmaPeak(ctx, out, threads, iters);
    await ctx.sync();
    return performance.now() - t0;
  };
  try {
    let iters = 16;
    await once(iters); // compiles the pipeline
    while (iters < 1 << 20 && (await once(iters)) < minMs) iters *= 2;
    let best = Number.POSITIVE_INFINITY;
    for (let r = 0; r < 5; r++) best = Math.min(best, await once(iters));
    const gflops = (threads * iters * FLOPS_PER_ITER) / best / 1e6;
    return {
      gflops,
      source: `measured: WGSL FMA loop, ${threads} threads × ${iters} iterations, best of 5`,
    };
  } finally {
    ctx.release(out);
  }
}
