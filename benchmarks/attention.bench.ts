/**
 * Causal GQA attention (@loop/attention):
 *  1. forward + backward of the tiled kernel for (B,T,Hq,Hkv,hd) = (8,256,4,4,16) and
 *     (2,1024,8,2,64), against an eager PyTorch transcription (benchmarks/torch/attention.py:
 *     explicit softmax(QKᵀ/√hd + causal mask)·V), on each thread count asked for (looplm's
 *     thread pool, torch.set_num_threads(n));
 *  2. peak memory of one forward + backward as T grows 256 → 4096 at (B,Hq,Hkv,hd) = (1,2,1,64):
 *     bytes the op saves for its backward (q, k, v, y, lse), and the growth of the process's
 *     peak RSS over the step (Linux: peak reset through /proc/self/clear_refs, then VmHWM), each
 *     T in a fresh child process (this file run with --memory-child); the quadratic reference
 *     (attention-ref.ts) and PyTorch are measured the same way for contrast.
 * Wall-clock and process CPU time are both reported (CPU time is steadier on a shared machine).
 * Ratios are looplm / PyTorch (lower is better).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { attention, attentionRef } from "@loop/attention";
import { backward, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { uploadTensor } from "@loop/webgpu";
import {
  backwardGpu,
  attention as gpuAttention,
  gpuParameter,
  zeroGpuGrads,
} from "@loop/webgpu/internal";
import { disableNativeKernels, enableNativeKernels } from "looplm";
import type { BenchContext } from "./lib/context.js";
import type { GpuBench } from "./lib/gpu.js";
import { compareWithNative } from "./lib/gpu-compare.js";
import type { Row } from "./lib/table.js";

export const name = "attention";
export const description =
  "causal GQA attention forward + backward vs eager PyTorch; peak memory as T grows";

type Shape5 = [number, number, number, number, number];
type Kernel = (q: Tensor, k: Tensor, v: Tensor) => Tensor;

function inputs([B, T, Hq, Hkv, hd]: Shape5) {
  return {
    q: randn([B, T, Hq, hd], 1),
    k: randn([B, T, Hkv, hd], 2),
    v: randn([B, T, Hkv, hd], 3),
    dy: randn([B, T, Hq, hd], 4).data,
  };
}

function step(f: Kernel, x: ReturnType<typeof inputs>): void {
  for (const t of [x.q, x.k, x.v]) t.grad = null;
  backward([f(x.q, x.k, x.v)], [x.dy]);
}

/** Linux: reset this process's peak RSS (VmHWM) to the current RSS; return the current RSS. */
function resetPeakRss(): number {
  writeFileSync("/proc/self/clear_refs", "5");
  return statusBytes("VmRSS");
}

function statusBytes(field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(
    readFileSync("/proc/self/status", "utf8"),
  );
  if (!m) throw new Error(`no ${field} in /proc/self/status`);
  return Number(m[1]) * 1024;
}

/** Child-process mode: one forward + backward at length T, print peak RSS growth as JSON. */
function memoryChild(kernel: string, T: number): void {
  const f: Kernel = kernel === "ref" ? attentionRef : attention;
  const x = inputs([1, T, 2, 1, 64]);
  step(f, inputs([1, 16, 2, 1, 64])); // compile and warm up
  const base = resetPeakRss();
  step(f, x);
  console.log(JSON.stringify({ peakGrowth: Math.max(0, statusBytes("VmHWM") - base) }));
}

function memoryOf(kernel: "tiled" | "ref", T: number): number {
  const r = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--memory-child", kernel, String(T)],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`memory child (${kernel}, T=${T}) failed: ${r.stderr}`);
  return (JSON.parse(r.stdout.trim().split("\n").pop()!) as { peakGrowth: number }).peakGrowth;
}

const SHAPES: Shape5[] = [
  [8, 256, 4, 4, 16],
  [2, 1024, 8, 2, 64],
];
const mib = (bytes: number) => Number((bytes / 2 ** 20).toFixed(1));

export async function run(ctx: BenchContext): Promise<void> {
  const reps = ctx.quick ? 2 : 5;
  const rows: Row[] = [];
  // portable kernels on every thread count, then the native ones (C compiled here) when they build
  const native = await enableNativeKernels();
  disableNativeKernels();
  if (!native.enabled) ctx.log(`native kernels not measured: ${native.reason}`);
  for (const kernels of native.enabled ? ["portable", "native"] : ["portable"]) {
    if (kernels === "native") await enableNativeKernels();
    for (const threads of ctx.threadCounts) {
      await ctx.setThreads(threads);
      for (const shape of SHAPES) {
        const x = inputs(shape);
        const t = await ctx.time(() => step(attention, x), { warmup: 1, repeats: reps });
        rows.push({
          "B,T,Hq,Hkv,hd": shape.join(","),
          kernels,
          threads,
          "ours ms": Number(t.medianMs.toFixed(1)),
          "ours CPU ms": Number(t.cpuMs.toFixed(1)),
        });
      }
    }
  }
  disableNativeKernels();
  // PyTorch after our runs, never alongside them
  await ctx.setThreads(1);
  let haveTorch = await ctx.torchAvailable();
  if (haveTorch) {
    type TorchTime = { wall_ms: number; cpu_ms: number; torch: string } | null;
    const seen = new Map<string, TorchTime>(); // one PyTorch run per (shape, threads)
    for (const row of rows) {
      const key = `${row["B,T,Hq,Hkv,hd"]}/${row.threads}`;
      const r =
        seen.get(key) ??
        ((await ctx.torch("attention.py", [
          "time",
          String(row["B,T,Hq,Hkv,hd"]),
          "--reps",
          String(reps),
          "--threads",
          String(row.threads),
        ])) as TorchTime);
      seen.set(key, r);
      if (r === null) {
        haveTorch = false;
        break;
      }
      row["torch ms"] = Number(r.wall_ms.toFixed(1));
      row["torch CPU ms"] = Number(r.cpu_ms.toFixed(1));
      row.ratio = Number((Number(row["ours ms"]) / r.wall_ms).toFixed(2));
      row["ratio CPU"] = Number((Number(row["ours CPU ms"]) / r.cpu_ms).toFixed(2));
    }
  }
  if (!haveTorch)
    ctx.log('PyTorch comparison skipped: `/usr/bin/python3 -c "import torch"` failed.');
  ctx.table(rows, "attention forward + backward, medians; ratio = looplm / PyTorch");

  const mem: Row[] = [];
  for (const T of ctx.quick ? [256, 512, 1024] : [256, 512, 1024, 2048, 4096]) {
    // Saved for the backward: q, k, v, y (float32) and lse [B, Hq, T].
    const saved = 4 * (T * 2 * 64 * 2 + T * 64 * 2 + 2 * T);
    const row: Row = { T, "saved MiB": mib(saved), "tiled RSS+ MiB": mib(memoryOf("tiled", T)) };
    if (T <= 2048) row["ref RSS+ MiB"] = mib(memoryOf("ref", T));
    if (haveTorch) {
      const tm = (await ctx.torch("attention.py", ["memory", `1,${T},2,1,64`])) as {
        peak_growth_bytes: number;
      } | null;
      if (tm) row["torch RSS+ MiB"] = mib(tm.peak_growth_bytes);
    }
    mem.push(row);
  }
  ctx.table(mem, "peak memory growth of one forward + backward, (B,Hq,Hkv,hd) = (1,2,1,64)");
}

const childAt = process.argv.indexOf("--memory-child");
if (childAt >= 0) memoryChild(process.argv[childAt + 1]!, Number(process.argv[childAt + 2]));

/** On a CPU emulation (SwiftShader) only that the path runs counts: one small shape. */
const EMULATED_SHAPES: Shape5[] = [[1, 64, 2, 2, 16]];

/**
 * Floating-point operations of causal attention forward + backward: Q·Kᵀ and P·V are 2·T²·hd
 * each per query head, halved by the causal mask (2·B·Hq·T²·hd forward); the backward recomputes
 * Q·Kᵀ and does four more products (dV, dP, dQ, dK): 2.5× the forward. 7·B·Hq·T²·hd in all.
 */
const attentionFlops = ([B, T, Hq, , hd]: Shape5): number => 7 * B * Hq * T * T * hd;

/** One forward + backward of the WGSL attention on fixed random inputs of `shape`. */
function gpuStep(gpu: GpuBench, shape: Shape5): () => void {
  const x = inputs(shape);
  const up = (t: Tensor) => gpuParameter(gpu.ctx, new Float32Array(t.data), t.shape);
  const [q, k, v] = [up(x.q), up(x.k), up(x.v)];
  const dy = uploadTensor(gpu.ctx, new Float32Array(x.dy), x.q.shape, { persistent: true });
  return () => {
    zeroGpuGrads([q, k, v]);
    backwardGpu(gpuAttention(q, k, v), dy);
  };
}

/** `--backend webgpu`: the WGSL attention, forward + backward, beside the native kernels. */
export async function runWebgpu(ctx: BenchContext, gpu: GpuBench): Promise<void> {
  const shapes = gpu.emulated ? EMULATED_SHAPES : SHAPES;
  const rows = await compareWithNative(
    ctx,
    gpu,
    "B,T,Hq,Hkv,hd",
    shapes.map((shape) => {
      const x = inputs(shape);
      return {
        label: shape.join(","),
        tokens: shape[0] * shape[1],
        flops: attentionFlops(shape),
        gpu: gpuStep(gpu, shape),
        cpu: () => step(attention, x),
      };
    }),
    { warmup: 1, repeats: ctx.quick ? 2 : 5 },
  );
  ctx.table(
    rows,
    `causal GQA attention forward + backward on ${gpu.adapter} and the CPU kernels; medians; ` +
      "GFLOP/s as 7·B·Hq·T²·hd; webgpu/cpu > 1: the GPU is faster",
  );
}
