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
import { backward, Rng, randn, randu, type Tensor } from "@loop/tensor";
import { disableNativeKernels, enableNativeKernels } from "looplm";
import type { BenchContext } from "./lib/context.js";
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
