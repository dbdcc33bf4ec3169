/**
 * Causal GQA attention benchmark (@loop/attention):
 *  1. forward + backward of the tiled kernel for (B,T,Hq,Hkv,hd) = (8,256,4,4,16) and
 *     (2,1024,8,2,64), against an eager PyTorch transcription (benchmarks/torch/attention.py:
 *     explicit softmax(QKᵀ/√hd + causal mask)·V) when /usr/bin/python3 imports torch; on one
 *     thread each, then on two (looplm's thread pool, torch.set_num_threads(2));
 *  2. peak memory of one forward + backward as T grows 256 → 4096 at (B,Hq,Hkv,hd) = (1,2,1,64):
 *     bytes the op saves for its backward (q, k, v, y, lse), and the growth of the process's
 *     peak RSS over the step (Linux: peak reset through /proc/self/clear_refs, then VmHWM), each
 *     T in a fresh child process; the quadratic reference (attention-ref.ts) and PyTorch are
 *     measured the same way for contrast.
 * Run:  pnpm exec tsx --conditions=@loop/source benchmarks/attention.ts [--quick]
 * Times are medians over repetitions; both wall-clock and process CPU time are reported (CPU
 * time is steadier on a shared machine). Ratios are looplm / PyTorch (lower is better).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { attention, attentionRef } from "@loop/attention";
import { backward, gemmName, randn, type Tensor } from "@loop/tensor";
import { startThreadPool, stopThreadPool } from "@loop/tensor/node";

type Shape5 = [number, number, number, number, number];

const here = dirname(fileURLToPath(import.meta.url));
const torchScript = join(here, "torch", "attention.py");
const quick = process.argv.includes("--quick");

function inputs([B, T, Hq, Hkv, hd]: Shape5) {
  return {
    q: randn([B, T, Hq, hd], 1),
    k: randn([B, T, Hkv, hd], 2),
    v: randn([B, T, Hkv, hd], 3),
    dy: randn([B, T, Hq, hd], 4).data,
  };
}

type Kernel = (q: Tensor, k: Tensor, v: Tensor) => Tensor;

function step(f: Kernel, x: ReturnType<typeof inputs>): void {
  for (const t of [x.q, x.k, x.v]) t.grad = null;
  backward([f(x.q, x.k, x.v)], [x.dy]);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function timeOurs(shape: Shape5, reps: number): { wall: number; cpu: number } {
  const x = inputs(shape);
  step(attention, x);
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < reps; i++) {
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    step(attention, x);
    walls.push(performance.now() - w0);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1000);
  }
  return { wall: median(walls), cpu: median(cpus) };
}

/** Run the PyTorch script; null when torch is unavailable. */
function python(args: string[]): Record<string, unknown>[] | null {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  const r = spawnSync("/usr/bin/python3", [torchScript, ...args], { env, encoding: "utf8" });
  if (r.status !== 0) {
    if (!/No module named|ENOENT/.test(`${r.stderr}${r.error ?? ""}`)) {
      console.error(`PyTorch run failed: ${r.stderr || r.error}`);
    }
    return null;
  }
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const fmt = (x: number, d = 1) => x.toFixed(d).padStart(9);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1).padStart(9);

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

async function timings(threads: number): Promise<void> {
  const shapes: Shape5[] = [
    [8, 256, 4, 4, 16],
    [2, 1024, 8, 2, 64],
  ];
  const reps = quick ? 2 : 5;
  const args = ["time", ...shapes.map((s) => s.join(",")), "--reps", String(reps)];
  const torch = python([...args, "--threads", String(threads)]);
  if (threads > 1) await startThreadPool(threads);
  console.log(`\nforward + backward, median ms, ${threads} thread(s), gemm ${gemmName()}`);
  if (torch) console.log(`PyTorch ${torch[0]!.torch}, ${torch[0]!.threads} thread(s)`);
  else console.log("PyTorch not available: ratios omitted");
  console.log("     B,T,Hq,Hkv,hd   ours wall  ours cpu torch wall torch cpu ratio wall ratio cpu");
  shapes.forEach((shape, i) => {
    const ours = timeOurs(shape, reps);
    const t = torch?.[i] as { wall_ms: number; cpu_ms: number } | undefined;
    const cols = [fmt(ours.wall), fmt(ours.cpu)];
    if (t) {
      cols.push(fmt(t.wall_ms), fmt(t.cpu_ms), fmt(ours.wall / t.wall_ms, 2));
      cols.push(fmt(ours.cpu / t.cpu_ms, 2));
    }
    console.log(`${shape.join(",").padStart(18)} ${cols.join(" ")}`);
  });
  if (threads > 1) await stopThreadPool();
}

async function main(): Promise<void> {
  console.log(`node ${process.version}`);
  await timings(1);
  await timings(2);

  console.log("\npeak memory of one forward + backward, (B,Hq,Hkv,hd) = (1,2,1,64), MiB");
  console.log("     T   saved   tiled RSS+   ref RSS+ torch RSS+");
  const lengths = quick ? [256, 512, 1024] : [256, 512, 1024, 2048, 4096];
  for (const T of lengths) {
    // Saved for the backward: q, k, v, y (float32) and lse [B, Hq, T].
    const saved = 4 * (T * 2 * 64 * 2 + T * 64 * 2 + 2 * T);
    const tiled = memoryOf("tiled", T);
    const ref = T <= 2048 ? mib(memoryOf("ref", T)) : "        -";
    const tm = python(["memory", `1,${T},2,1,64`]);
    const torchMem = tm ? mib(tm[0]!.peak_growth_bytes as number) : "        -";
    console.log(`${String(T).padStart(6)} ${mib(saved)} ${mib(tiled)}  ${ref}  ${torchMem}`);
  }
}

const childAt = process.argv.indexOf("--memory-child");
if (childAt >= 0) memoryChild(process.argv[childAt + 1]!, Number(process.argv[childAt + 2]));
else await main();
