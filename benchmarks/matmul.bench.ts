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
import { uploadTensor } from "@loop/webgpu";
import { gpuNoGrad, matmul } from "@loop/webgpu/internal";
import { coldGemmRows } from "./lib/cold-gemm.js";
import type { BenchContext } from "./lib/context.js";
import { type GpuBench, sig } from "./lib/gpu.js";
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

  if (native.ok) {
    const { sgemm, setThreads } = native.addon;
    ctx.table(
      await coldGemmRows(ctx, sgemm, setThreads, rng),
      "native GEMM on a training step's layer shapes: operands in cache (hot) and evicted by a " +
        "64 MB sweep before each call (cold, as the backward finds them); medians",
    );
  }

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

/** Large squares, measured only on a real GPU (the CPU side would take minutes). */
const GPU_ONLY_SHAPES: [number, number, number][] = [
  [4096, 4096, 4096],
  [8192, 8192, 8192],
];
/** On a CPU emulation (SwiftShader) only that the path runs counts: one small product. */
const EMULATED_SHAPES: [number, number, number][] = [[256, 128, 128]];

/**
 * `--backend webgpu`: the tiled WGSL GEMM (@loop/webgpu `matmul`) on the same shapes and the
 * three layouts the model uses, beside the native CPU GEMM on all cores in the same run; GFLOP/s
 * and the fraction of the GPU's fp32 peak.
 */
export async function runWebgpu(ctx: BenchContext, gpu: GpuBench): Promise<void> {
  const rng = new Rng(1);
  const native = await buildNativeAddon<TensorAddon>("tensor", tensorNativeSource);
  if (!native.ok) ctx.log(`native kernel not measured: ${native.error}`);
  const threads = Math.max(...ctx.threadCounts);
  if (native.ok) native.addon.setThreads(threads);
  const cpuPeak = (await ctx.peak(threads)).gflops;
  const shapes = gpu.emulated ? EMULATED_SHAPES : [...SHAPES, ...GPU_ONLY_SHAPES];
  const layouts = [
    { label: "A·B", transA: false, transB: false },
    { label: "A·Bᵀ", transA: false, transB: true },
    { label: "Aᵀ·B", transA: true, transB: false },
  ];
  const rows: Row[] = [];
  for (const [M, K, N] of shapes) {
    const A = randomShared(M * K, rng);
    const B = randomShared(K * N, rng);
    const C = allocF32(M * N);
    for (const l of layouts) {
      // the same values reinterpreted: A as [K,M] when transposed, B as [N,K] (GpuContext.write
      // copies views of shared memory itself)
      const a = uploadTensor(gpu.ctx, A, l.transA ? [K, M] : [M, K], {
        persistent: true,
      });
      const b = uploadTensor(gpu.ctx, B, l.transB ? [N, K] : [K, N], {
        persistent: true,
      });
      const g = await gpu.time(() => gpuNoGrad(() => matmul(a, b, l)), {
        warmup: 2,
        repeats: 7,
      });
      a.dispose();
      b.dispose();
      const gpuGflops = gflops(M, N, K, g.medianMs);
      const row: Row = {
        "M×K×N": shapeLabel(M, K, N),
        layout: l.label,
        "webgpu ms": sig(g.medianMs),
        "webgpu GFLOP/s": sig(gpuGflops),
        "% GPU peak": sig((100 * gpuGflops) / gpu.peak.gflops),
      };
      if (native.ok && !GPU_ONLY_SHAPES.some(([m, k, n]) => m === M && k === K && n === N)) {
        const lda = l.transA ? M : K;
        const ldb = l.transB ? K : N;
        const t = await ctx.time(
          () =>
            native.addon.sgemm(l.transA, l.transB, M, N, K, 1, A, 0, lda, B, 0, ldb, 0, C, 0, N),
          { warmup: 2, repeats: ctx.quick ? 3 : 7 },
        );
        const cpuGflops = gflops(M, N, K, t.medianMs);
        row[`native ${threads}T ms`] = Number(t.medianMs.toFixed(2));
        row["native GFLOP/s"] = sig(cpuGflops);
        row["native % CPU peak"] = sig((100 * cpuGflops) / cpuPeak);
        row["webgpu/native"] = sig(t.medianMs / g.medianMs);
      }
      rows.push(row);
    }
  }
  ctx.table(
    rows,
    `C = op(A)·op(B) in float32 on ${gpu.adapter} (fp32 peak ${gpu.peak.gflops.toFixed(0)} GFLOP/s, ${gpu.peak.source}) ` +
      `and the native GEMM on ${threads} CPU thread(s); medians; webgpu/native > 1 means the GPU is faster`,
  );
}
