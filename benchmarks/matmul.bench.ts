/**
 * GEMM throughput on the shapes the models use: C[M,N] = A[M,K] · B[K,N] in float32, for the
 * native (C compiled here, @loop/tensor/node), WebAssembly SIMD and portable JS kernels on each
 * thread count, against PyTorch (OpenBLAS)
 * measured in the same run. Also: the layouts of linear layers (A·Bᵀ) and weight gradients
 * (Aᵀ·B), and the hand-off cost of splitting small products across threads.
 */
import { Rng } from "@loop/tensor";
import {
  allocF32,
  type GemmFn,
  gemmParallel,
  gemmParallelJs,
  PARALLEL_MIN_MACS,
  setGemmParallelThreshold,
} from "@loop/tensor/kernel";
import { buildNativeAddon, type TensorAddon, tensorNativeSource } from "@loop/tensor/node";
import type { BenchContext } from "./lib/context.js";
import type { Row } from "./lib/table.js";

export const name = "matmul";
export const description =
  "GEMM GFLOP/s (M,K,N model shapes): wasm-simd and js kernels on 1..n threads vs PyTorch";

const SHAPES: [number, number, number][] = [
  [8192, 128, 512],
  [8192, 512, 128],
  [4096, 256, 256],
  [1024, 1024, 1024],
];

interface TorchResult {
  torch: string;
  blas: string;
  results: { M: number; K: number; N: number; threads: number; ms: number; cpu_ms: number }[];
}

function randomShared(n: number, rng: Rng): Float32Array {
  const a = allocF32(n);
  for (let i = 0; i < n; i++) a[i] = rng.normal();
  return a;
}

const gflops = (M: number, N: number, K: number, ms: number): number => (2 * M * N * K) / ms / 1e6;
const shapeLabel = (M: number, K: number, N: number): string => `${M}×${K}×${N}`;

export async function run(ctx: BenchContext): Promise<void> {
  const rng = new Rng(1);
  const data = SHAPES.map(([M, K, N]) => ({
    A: randomShared(M * K, rng),
    B: randomShared(K * N, rng),
    C: allocF32(M * N),
  }));
  const ours: { shape: number; kernel: string; threads: number; ms: number; cpuMs: number }[] = [];
  // the native kernel compiled from source on this machine, when it builds
  const native = await buildNativeAddon<TensorAddon>("tensor", tensorNativeSource);
  if (!native.ok) ctx.log(`native kernel not measured: ${native.error}`);
  for (const threads of ctx.threadCounts) {
    await ctx.setThreads(threads);
    for (let s = 0; s < SHAPES.length; s++) {
      const [M, K, N] = SHAPES[s]!;
      const { A, B, C } = data[s]!;
      for (const [kernel, fn] of [
        ["wasm-simd", gemmParallel],
        ["js", gemmParallelJs],
      ] as [string, GemmFn][]) {
        const js = kernel === "js";
        const t = await ctx.time(() => fn(false, false, M, N, K, 1, A, 0, K, B, 0, N, 0, C, 0, N), {
          warmup: js ? 1 : 3,
          repeats: js ? 3 : 9,
        });
        ours.push({ shape: s, kernel, threads, ms: t.medianMs, cpuMs: t.cpuMs });
      }
      if (native.ok) {
        const { sgemm, setThreads } = native.addon;
        setThreads(threads);
        const t = await ctx.time(
          () => sgemm(false, false, M, N, K, 1, A, 0, K, B, 0, N, 0, C, 0, N),
          {
            warmup: 3,
            repeats: 9,
          },
        );
        ours.push({
          shape: s,
          kernel: "native",
          threads,
          ms: t.medianMs,
          cpuMs: t.cpuMs,
        });
      }
    }
  }
  // after our runs, never alongside them: both would share the cores
  const torch = (await ctx.torch("matmul.py", [
    "--shapes",
    SHAPES.map(([M, K, N]) => `${M}x${K}x${N}`).join(","),
    "--threads",
    ctx.threadCounts.join(","),
    ...(ctx.quick ? ["--warmup", "1", "--repeats", "3"] : []),
  ])) as TorchResult | null;
  if (torch === null) {
    ctx.log('PyTorch comparison skipped: `/usr/bin/python3 -c "import torch"` failed.');
  } else {
    ctx.log(`PyTorch ${torch.torch} (${torch.blas})`);
  }
  const torchRun = (s: number, threads: number) => {
    const [M, K, N] = SHAPES[s]!;
    return torch?.results.find((r) => r.M === M && r.K === K && r.N === N && r.threads === threads);
  };
  const peaks = new Map<number, number>();
  for (const t of new Set(ours.map((r) => r.threads))) peaks.set(t, (await ctx.peak(t)).gflops);
  const peak = (threads: number) => peaks.get(threads)!;
  const rows: Row[] = [];
  for (const r of ours) {
    const [M, K, N] = SHAPES[r.shape]!;
    const g = gflops(M, N, K, r.ms);
    const tr = torchRun(r.shape, r.threads);
    const row: Row = {
      "M×K×N": shapeLabel(M, K, N),
      kernel: r.kernel,
      threads: r.threads,
      ms: Number(r.ms.toFixed(2)),
      "GFLOP/s": Number(g.toFixed(1)),
      "% peak": Number(((100 * g) / peak(r.threads)).toFixed(1)),
      "GFLOP/CPU-s": Number(gflops(M, N, K, r.cpuMs).toFixed(1)),
    };
    if (tr !== undefined) {
      row["torch GFLOP/s"] = Number(gflops(M, N, K, tr.ms).toFixed(1));
      row["torch GFLOP/CPU-s"] = Number(gflops(M, N, K, tr.cpu_ms).toFixed(1));
      row["ours/torch"] = Number((tr.ms / r.ms).toFixed(3));
    }
    rows.push(row);
  }
  ctx.table(
    rows,
    "C = A·B, medians of timed runs; % of the peak of the threads used; GFLOP/CPU-s = work per " +
      "second of process CPU time (all threads), what each core achieved while it ran",
  );

  // layouts used by linear layers (x·Wᵀ) and their weight gradients (Gᵀ·X), most threads
  const most = Math.max(...ctx.threadCounts);
  await ctx.setThreads(most);
  const layoutRows: Row[] = [];
  for (let s = 0; s < SHAPES.length; s++) {
    const [M, K, N] = SHAPES[s]!;
    const { A, B, C } = data[s]!;
    const cases: [string, () => void][] = [
      ["A·B", () => gemmParallel(false, false, M, N, K, 1, A, 0, K, B, 0, N, 0, C, 0, N)],
      // same buffers reinterpreted: B as [N,K] (transB), A as [K,M] (transA)
      ["A·Bᵀ", () => gemmParallel(false, true, M, N, K, 1, A, 0, K, B, 0, K, 0, C, 0, N)],
      ["Aᵀ·B", () => gemmParallel(true, false, M, N, K, 1, A, 0, M, B, 0, N, 0, C, 0, N)],
    ];
    const row: Row = { "M×K×N": shapeLabel(M, K, N) };
    for (const [label, fn] of cases) {
      const t = await ctx.time(fn, { warmup: 2, repeats: 7 });
      row[`${label} GFLOP/s`] = Number(gflops(M, N, K, t.medianMs).toFixed(1));
    }
    layoutRows.push(row);
  }
  ctx.table(layoutRows, `wasm-simd on ${most} thread(s): operand layouts`);

  // hand-off cost: small square products with and without splitting
  if (most > 1) {
    const prev = setGemmParallelThreshold(0);
    const small: Row[] = [];
    try {
      for (const n of [32, 48, 64, 96, 128, 192, 256]) {
        const A = randomShared(n * n, rng);
        const B = randomShared(n * n, rng);
        const C = allocF32(n * n);
        const fn = () => gemmParallel(false, false, n, n, n, 1, A, 0, n, B, 0, n, 0, C, 0, n);
        await ctx.setThreads(1);
        const one = await ctx.time(fn, { warmup: 20, repeats: 41 });
        await ctx.setThreads(most);
        const many = await ctx.time(fn, { warmup: 20, repeats: 41 });
        small.push({
          "n (M=N=K)": n,
          MACs: n * n * n,
          "1 thread µs": Number((one.medianMs * 1000).toFixed(1)),
          [`${most} threads µs`]: Number((many.medianMs * 1000).toFixed(1)),
          speedup: Number((one.medianMs / many.medianMs).toFixed(2)),
        });
      }
    } finally {
      setGemmParallelThreshold(prev);
    }
    ctx.table(
      small,
      `splitting small products (threshold in use: ${PARALLEL_MIN_MACS} MACs = M·N·K)`,
    );
  }
}
