/**
 * SSD scan: forward + backward (gradient of sum(y ⊙ dy) into every input) of the chunked scan
 * of @loop/ssm-kernels, beside the sequential reference and beside PyTorch running a
 * transcription of the same chunked algorithm (benchmarks/torch/ssd.py), G = 1, chunk 64.
 * Also time(4T)/time(T) of the chunked scan (cost linear in T) and the chunked scan on each
 * thread count, and the same chunked scan on the native kernels (C compiled here, `enableNativeKernels`)
 * when they build. Single-thread figures are compared on process CPU time (`cpuMs`, robust to
 * other load), thread counts on wall time.
 */
import { ssdScanChunked, ssdScanRef } from "@loop/ssm-kernels";
import { backward, Rng, type Tensor } from "@loop/tensor";
import { randn, randu } from "@loop/tensor/internal";
import { uploadTensor } from "@loop/webgpu";
import {
  backwardGpu,
  gpuParameter,
  ssdScanChunked as gpuSsdScanChunked,
  zeroGpuGrads,
} from "@loop/webgpu/internal";
import { disableNativeKernels, enableNativeKernels } from "looplm";
import type { BenchContext } from "./lib/context.js";
import type { GpuBench } from "./lib/gpu.js";
import { compareWithNative } from "./lib/gpu-compare.js";
import type { Timing } from "./lib/timer.js";

export const name = "ssd";
export const description =
  "chunked SSD scan fwd+bwd vs sequential reference vs PyTorch; time(4T)/time(T); threads";

interface Shape {
  B: number;
  T: number;
  H: number;
  P: number;
  N: number;
}

const CHUNK = 64;
const SHAPES: Shape[] = [
  { B: 8, T: 256, H: 8, P: 16, N: 16 },
  { B: 4, T: 1024, H: 8, P: 64, N: 64 },
];

interface TorchResult {
  seconds: number[];
  cpu_seconds: number[];
  threads: number;
  torch: string;
}

/** One forward + backward of `scan` on fixed random inputs of shape `s`. */
function workload(scan: typeof ssdScanChunked, s: Shape): () => void {
  const xs = [
    randn([s.B, s.T, s.H, s.P], 1),
    randu([s.B, s.T, s.H], 2, 0.001, 0.1),
    randu([s.H], 3, -8, -1),
    randn([s.B, s.T, 1, s.N], 4),
    randn([s.B, s.T, 1, s.N], 5),
  ] as [Tensor, Tensor, Tensor, Tensor, Tensor];
  const dy = new Rng(9).fillUniform(new Float32Array(s.B * s.T * s.H * s.P), -1, 1);
  return () => {
    for (const t of xs) t.grad = null;
    const { y } = scan(...xs, { chunkSize: CHUNK });
    backward(y, [dy]);
  };
}

const label = (s: Shape) => `(${s.B},${s.T},${s.H},${s.P},${s.N})`;
const ms = (v: number) => Number(v.toFixed(1));

export async function run(ctx: BenchContext): Promise<void> {
  const repeats = ctx.quick ? 3 : 7;
  const opts = { warmup: 3, repeats };
  await ctx.setThreads(1);
  const single: { s: Shape; chunked: Timing; ref: Timing; long: Timing }[] = [];
  for (const s of SHAPES) {
    const chunked = await ctx.time(workload(ssdScanChunked, s), opts);
    const ref = await ctx.time(workload(ssdScanRef, s), { warmup: 1, repeats: ctx.quick ? 1 : 3 });
    const long = await ctx.time(workload(ssdScanChunked, { ...s, T: 4 * s.T }), {
      warmup: 1,
      repeats: ctx.quick ? 1 : 3,
    });
    single.push({ s, chunked, ref, long });
  }
  const threads: { n: number; s: Shape; t: Timing }[] = [];
  for (const n of ctx.threadCounts.filter((n) => n > 1)) {
    await ctx.setThreads(n);
    for (const s of SHAPES)
      threads.push({ n, s, t: await ctx.time(workload(ssdScanChunked, s), opts) });
  }
  await ctx.setThreads(1);
  // the native kernels, after the portable ones
  const native = await enableNativeKernels();
  const nativeTimes: (Timing | null)[] = [];
  for (const s of SHAPES)
    nativeTimes.push(native.enabled ? await ctx.time(workload(ssdScanChunked, s), opts) : null);
  disableNativeKernels();
  if (!native.enabled) ctx.log(`native kernels not measured: ${native.reason}`);
  // PyTorch last, so it never shares the cores with our own measurements.
  const torch = (await ctx.torch("ssd.py", [
    JSON.stringify({ shapes: SHAPES, chunk: CHUNK, reps: repeats, threads: 1 }),
  ])) as TorchResult | null;
  if (torch === null) ctx.log("PyTorch not available: comparison skipped");
  else ctx.log(`PyTorch ${torch.torch}, 1 thread`);

  ctx.table(
    single.map(({ s, chunked, ref }, i) => {
      const pt = torch ? torch.cpu_seconds[i]! * 1000 : null;
      return {
        "(B,T,H,P,N)": label(s),
        "chunked cpu ms": ms(chunked.cpuMs),
        "sequential cpu ms": ms(ref.cpuMs),
        "pytorch cpu ms": pt === null ? "—" : ms(pt),
        "sequential/chunked": `${(ref.cpuMs / chunked.cpuMs).toFixed(2)}×`,
        "chunked/pytorch": pt === null ? "—" : `${(chunked.cpuMs / pt).toFixed(2)}×`,
        "chunked wall ms": ms(chunked.medianMs),
        "native cpu ms": nativeTimes[i] ? ms(nativeTimes[i]!.cpuMs) : "—",
        "native/pytorch":
          pt === null || !nativeTimes[i] ? "—" : `${(nativeTimes[i]!.cpuMs / pt).toFixed(2)}×`,
      };
    }),
    "SSD scan, forward + backward, G=1, chunk 64, one thread (median process CPU time)",
  );
  ctx.table(
    single.map(({ s, chunked, long }) => ({
      "(B,H,P,N)": `(${s.B},${s.H},${s.P},${s.N})`,
      T: s.T,
      "time(T) cpu ms": ms(chunked.cpuMs),
      "time(4T) cpu ms": ms(long.cpuMs),
      "time(4T)/time(T)": Number((long.cpuMs / chunked.cpuMs).toFixed(2)),
    })),
    "Chunked scan cost vs sequence length (linear ⇒ ≈ 4)",
  );
  if (threads.length > 0) {
    ctx.table(
      threads.map(({ n, s, t }) => {
        const one = single.find((r) => r.s === s)!.chunked.medianMs;
        return {
          "(B,T,H,P,N)": label(s),
          threads: n,
          "1 thread wall ms": ms(one),
          "wall ms": ms(t.medianMs),
          "speed-up": `${(one / t.medianMs).toFixed(2)}×`,
        };
      }),
      "Chunked scan on a thread pool (median wall time)",
    );
  }
}

/** On a CPU emulation (SwiftShader) only that the path runs counts: one small shape. */
const EMULATED_SHAPES: Shape[] = [{ B: 1, T: 64, H: 2, P: 16, N: 16 }];

/**
 * Floating-point operations of one forward + backward of the chunked scan, per the chunked
 * algorithm (chunk L, per chunk and head): C·Bᵀ 2L²N, its masked product with x 2L²P, the chunk
 * state Bᵀ·x 2LNP and its read-out C·state 2LNP; the backward is counted as twice the forward
 * (each product has two gradient products). An accounting for comparing backends, not a count
 * of the kernels' instructions.
 */
function ssdFlops(s: Shape): number {
  const L = Math.min(CHUNK, s.T);
  const perChunkHead = 2 * L * L * (s.N + s.P) + 4 * L * s.N * s.P;
  return 3 * s.B * s.H * Math.ceil(s.T / L) * perChunkHead;
}

/** One forward + backward of the WGSL scan on fixed random inputs of shape `s`. */
function gpuWorkload(gpu: GpuBench, s: Shape): () => void {
  const rng = new Rng(1);
  const up = (shape: number[], lo: number, hi: number) =>
    gpuParameter(
      gpu.ctx,
      rng.fillUniform(new Float32Array(shape.reduce((a, b) => a * b)), lo, hi),
      shape,
    );
  const x = up([s.B, s.T, s.H, s.P], -1, 1);
  const dt = up([s.B, s.T, s.H], 0.001, 0.1);
  const A = up([s.H], -8, -1);
  const B = up([s.B, s.T, 1, s.N], -1, 1);
  const C = up([s.B, s.T, 1, s.N], -1, 1);
  const dy = uploadTensor(
    gpu.ctx,
    rng.fillUniform(new Float32Array(s.B * s.T * s.H * s.P), -1, 1),
    [s.B, s.T, s.H, s.P],
    { persistent: true },
  );
  const params = [x, dt, A, B, C];
  return () => {
    zeroGpuGrads(params);
    const { y } = gpuSsdScanChunked(x, dt, A, B, C, { chunkSize: CHUNK });
    backwardGpu(y, dy);
  };
}

/** `--backend webgpu`: the WGSL chunked scan, forward + backward, beside the native kernels. */
export async function runWebgpu(ctx: BenchContext, gpu: GpuBench): Promise<void> {
  const shapes = gpu.emulated ? EMULATED_SHAPES : SHAPES;
  const rows = await compareWithNative(
    ctx,
    gpu,
    "(B,T,H,P,N)",
    shapes.map((s) => ({
      label: label(s),
      tokens: s.B * s.T,
      flops: ssdFlops(s),
      gpu: gpuWorkload(gpu, s),
      cpu: workload(ssdScanChunked, s),
    })),
    { warmup: 2, repeats: ctx.quick ? 3 : 7 },
  );
  ctx.table(
    rows,
    `SSD scan, forward + backward, G=1, chunk ${CHUNK}, on ${gpu.adapter} and the CPU kernels; ` +
      "medians; GFLOP/s by the chunked algorithm's count (ssdFlops); webgpu/cpu > 1: the GPU is faster",
  );
}
