/**
 * `pnpm bench [name ...] [--threads=1,2] [--quick]`: run every benchmarks/*.bench.ts in turn
 * (or only those named), each as `run(ctx)` with the context of lib/context.ts. A failing
 * benchmark is reported and the others still run; the exit code is 1 if any failed.
 */
import { readdir } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gemmName } from "@loop/tensor/kernel";
import { stopThreadPool } from "@loop/tensor/node";
import { type BenchContext, createContext } from "./lib/context.js";
import { machine, peak } from "./lib/machine.js";

export interface BenchModule {
  name: string;
  description: string;
  run(ctx: BenchContext): Promise<void>;
}

const dir = fileURLToPath(new URL(".", import.meta.url));

function parseArgs(argv: string[]): { names: string[]; threads?: number[]; quick: boolean } {
  const names: string[] = [];
  let threads: number[] | undefined;
  let quick = false;
  for (const a of argv) {
    if (a === "--quick") quick = true;
    else if (a.startsWith("--threads=")) {
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
  return { names, threads, quick };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2).filter((a) => a !== "--"));
  const files = (await readdir(dir)).filter((f) => f.endsWith(".bench.ts")).sort();
  const wanted = (f: string) =>
    args.names.length === 0 || args.names.includes(f.replace(/\.bench\.ts$/, ""));
  const unknown = args.names.filter((n) => !files.includes(`${n}.bench.ts`));
  if (unknown.length > 0) {
    const have = files.map((f) => f.replace(/\.bench\.ts$/, "")).join(", ");
    throw new Error(`no benchmark named ${unknown.join(", ")} (have: ${have})`);
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
  let failed = 0;
  for (const f of files.filter(wanted)) {
    const mod = (await import(pathToFileURL(`${dir}${f}`).href)) as BenchModule;
    console.log(`\n=== ${mod.name}: ${mod.description}`);
    const ctx = createContext({ threadCounts: args.threads, quick: args.quick });
    const t0 = performance.now();
    try {
      await mod.run(ctx);
      console.log(`(${mod.name} took ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed++;
      console.error(`benchmark ${mod.name} failed:`, e);
    } finally {
      await stopThreadPool();
    }
  }
  if (failed > 0) process.exitCode = 1;
}

await main();
