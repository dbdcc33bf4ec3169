/**
 * `pnpm bench [name ...] [--threads=1,2] [--quick] [--backend webgpu [--gpu-peak-gflops=N]]`:
 * run every benchmarks/*.bench.ts in turn (or only those named), each as `run(ctx)` with the
 * context of lib/context.ts. A failing benchmark is reported and the others still run; the exit
 * code is 1 if any failed. With `--backend webgpu` each named benchmark runs its `runWebgpu`
 * instead (GPU figures beside the native CPU ones, in the same run) on one device opened first;
 * no adapter is one line and exit code 1.
 */
import { readdir } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gemmName } from "@loop/tensor/kernel";
import { stopThreadPool } from "@loop/tensor/node";
import { type BenchContext, createContext } from "./lib/context.js";
import { describeGpu, type GpuBench, openGpuBench } from "./lib/gpu.js";
import { machine, peak } from "./lib/machine.js";

export interface BenchModule {
  name: string;
  description: string;
  run(ctx: BenchContext): Promise<void>;
  /** The GPU variant (`--backend webgpu`), where the benchmark has one. */
  runWebgpu?(ctx: BenchContext, gpu: GpuBench): Promise<void>;
}

type Backend = "cpu" | "webgpu";

interface Args {
  names: string[];
  threads?: number[];
  quick: boolean;
  backend: Backend;
  gpuPeakGflops?: number;
}

const dir = fileURLToPath(new URL(".", import.meta.url));
// (".ts" from source; ".js" in the offline bundle, whose benchmarks are built beside this file)
const ext = new URL(import.meta.url).pathname.endsWith(".ts") ? ".ts" : ".js";

function parseArgs(argv: string[]): Args {
  const names: string[] = [];
  let threads: number[] | undefined;
  let quick = false;
  let backend: Backend = "cpu";
  let gpuPeakGflops: number | undefined;
  // "--option value" is read as "--option=value"
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === "--backend" || a === "--gpu-peak-gflops") && i + 1 < argv.length)
      args.push(`${a}=${argv[++i]}`);
    else args.push(a);
  }
  for (const a of args) {
    if (a === "--quick") quick = true;
    else if (a.startsWith("--backend=")) {
      const v = a.slice("--backend=".length);
      if (v !== "cpu" && v !== "webgpu")
        throw new Error(`--backend: expected cpu or webgpu, got ${v}`);
      backend = v;
    } else if (a.startsWith("--gpu-peak-gflops=")) {
      gpuPeakGflops = Number(a.slice("--gpu-peak-gflops=".length));
      if (!(gpuPeakGflops > 0))
        throw new Error(`--gpu-peak-gflops: expected a positive number of GFLOP/s, got ${a}`);
    } else if (a.startsWith("--threads=")) {
      threads = a
        .slice("--threads=".length)
        .split(",")
        .map((s) => Number(s));
      if (threads.some((t) => !Number.isInteger(t) || t < 1)) {
        throw new Error(`--threads: expected positive integers like 1,2, got ${a}`);
      }
    } else if (a.startsWith("--")) throw new Error(`unknown option ${a}`);
    else names.push(a);
  }
  if (gpuPeakGflops !== undefined && backend !== "webgpu")
    throw new Error("--gpu-peak-gflops needs --backend webgpu");
  return { names, threads, quick, backend, gpuPeakGflops };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2).filter((a) => a !== "--"));
  const files = (await readdir(dir)).filter((f) => f.endsWith(`.bench${ext}`)).sort();
  const wanted = (f: string) =>
    args.names.length === 0 || args.names.includes(f.replace(/\.bench\.[jt]s$/, ""));
  const unknown = args.names.filter((n) => !files.includes(`${n}.bench${ext}`));
  if (unknown.length > 0) {
    const have = files.map((f) => f.replace(/\.bench\.[jt]s$/, "")).join(", ");
    throw new Error(`no benchmark named ${unknown.join(", ")} (have: ${have})`);
  }
  const modules = new Map<string, BenchModule>();
  for (const f of files.filter(wanted))
    modules.set(f, (await import(pathToFileURL(`${dir}${f}`).href)) as BenchModule);
  if (args.backend === "webgpu") {
    const cpuOnly = [...modules.values()].filter((m) => !m.runWebgpu).map((m) => m.name);
    if (cpuOnly.length > 0) {
      const gpu = [...modules.values()].filter((m) => m.runWebgpu).map((m) => m.name);
      throw new Error(
        `${cpuOnly.join(", ")}: no webgpu variant${args.names.length ? "" : " (name the benchmarks to run)"}; benchmarks with one: ${gpu.join(", ")}`,
      );
    }
  }
  // the device first: without one, one line and nothing measured
  let gpu: GpuBench | null = null;
  if (args.backend === "webgpu") {
    try {
      gpu = await openGpuBench({ peakGflops: args.gpuPeakGflops, quick: args.quick });
    } catch (e) {
      throw new Error(`--backend webgpu: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const m = machine();
  console.log(
    `node ${process.version} · ${m.cpu} · ${m.cores} cores · load average ${m.loadAverage.toFixed(2)}`,
  );
  const threads = args.threads ?? [...new Set([1, m.cores])];
  for (const t of threads) {
    const p = await peak(t);
    console.log(`fp32 peak, ${t} thread(s): ${p.gflops.toFixed(0)} GFLOP/s (${p.source})`);
  }
  console.log(
    `native builds -march=${m.arch} · portable gemm ${gemmName()} (benchmarks that measure native kernels say so)`,
  );
  if (gpu) for (const line of describeGpu(gpu)) console.log(line);
  let failed = 0;
  for (const mod of modules.values()) {
    console.log(`\n=== ${mod.name}${gpu ? " (webgpu)" : ""}: ${mod.description}`);
    const ctx = createContext({ threadCounts: args.threads, quick: args.quick });
    const t0 = performance.now();
    try {
      if (gpu) await mod.runWebgpu!(ctx, gpu);
      else await mod.run(ctx);
      console.log(`(${mod.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed++;
      console.error(`benchmark ${mod.name} failed:`, e);
    } finally {
      await stopThreadPool();
    }
  }
  gpu?.ctx.destroy();
  if (failed > 0) process.exitCode = 1;
}

try {
  await main();
} catch (e) {
  // a bad argument or a missing benchmark: one line, no stack trace
  console.error(`pnpm bench: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
