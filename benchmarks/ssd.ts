/**
 * SSD scan benchmark: forward + backward time of the chunked scan (@loop/ssm-kernels) beside the
 * sequential reference and beside PyTorch running a transcription of the same chunked algorithm
 * (benchmarks/torch/ssd.py, one thread), all in one run, G = 1, chunk size 64. Also
 * time(4T)/time(T) of the chunked scan, to show that its cost is linear in T, and the chunked
 * scan on a 2-thread pool (wall clock: CPU time would add the threads up).
 * Times are medians of process CPU time (robust on a shared machine; every contender runs on
 * one thread), with the wall-clock medians beside them.
 *   pnpm exec tsx --conditions=@loop/source benchmarks/ssd.ts [--quick]
 */
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ssdScanChunked, ssdScanRef } from "@loop/ssm-kernels";
import { backward, gemmName, Rng, randn, randu, type Tensor } from "@loop/tensor";
import { startThreadPool, stopThreadPool } from "@loop/tensor/node";

interface Shape {
  B: number;
  T: number;
  H: number;
  P: number;
  N: number;
}
const CHUNK = 64;
const quick = process.argv.includes("--quick");

function inputs(s: Shape): Tensor[] {
  return [
    randn([s.B, s.T, s.H, s.P], 1),
    randu([s.B, s.T, s.H], 2, 0.001, 0.1),
    randu([s.H], 3, -8, -1),
    randn([s.B, s.T, 1, s.N], 4),
    randn([s.B, s.T, 1, s.N], 5),
  ];
}

type Scan = typeof ssdScanChunked;

interface Timing {
  cpu: number;
  wall: number;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Median seconds of forward + backward (gradient of sum(y ⊙ dy) into every input). */
function time(scan: Scan, s: Shape, reps: number): Timing {
  const xs = inputs(s);
  const dy = new Rng(9).fillUniform(new Float32Array(s.B * s.T * s.H * s.P), -1, 1);
  const once = () => {
    for (const t of xs) t.grad = null;
    const [x, dt, A, B, C] = xs as [Tensor, Tensor, Tensor, Tensor, Tensor];
    const { y } = scan(x, dt, A, B, C, { chunkSize: CHUNK });
    backward(y, [dy]);
  };
  for (let i = 0; i < 3; i++) once(); // warm-up: let V8 tier the kernels up
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < reps; i++) {
    const w0 = performance.now();
    const c0 = cpuSeconds();
    once();
    cpu.push(cpuSeconds() - c0);
    wall.push((performance.now() - w0) / 1000);
  }
  return { cpu: median(cpu), wall: median(wall) };
}

function torchTimes(shapes: Shape[], reps: number): (Timing | null)[] {
  const script = join(dirname(fileURLToPath(import.meta.url)), "torch", "ssd.py");
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  try {
    const out = execFileSync(
      "/usr/bin/python3",
      [script, JSON.stringify({ shapes, chunk: CHUNK, reps, threads: 1 })],
      { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    const res = JSON.parse(out.trim().split("\n").pop()!) as {
      seconds: number[];
      cpu_seconds: number[];
      threads: number;
      torch: string;
    };
    console.log(`PyTorch ${res.torch}, ${res.threads} thread`);
    return res.seconds.map((w, i) => ({ wall: w, cpu: res.cpu_seconds[i]! }));
  } catch (e) {
    console.log(`PyTorch comparison skipped (${(e as Error).message.split("\n")[0]})`);
    return shapes.map(() => null);
  }
}

const shapes: Shape[] = [
  { B: 8, T: 256, H: 8, P: 16, N: 16 },
  { B: 4, T: 1024, H: 8, P: 64, N: 64 },
];
const reps = quick ? 1 : 7;
const ms = (v: number) => `${(v * 1000).toFixed(1)}`;
const fmt = (t: Timing | null) => (t === null ? "—" : `${ms(t.cpu)} (${ms(t.wall)}) ms`);
const ratio = (a: Timing | null, b: Timing | null) =>
  a === null || b === null ? "—" : `${(a.cpu / b.cpu).toFixed(2)}×`;

console.log(`gemm: ${gemmName()}; times: CPU median (wall median)`);

const torch = torchTimes(shapes, reps);
const rows = shapes.map((s, i) => {
  const chunked = time(ssdScanChunked, s, reps);
  const ref = time(ssdScanRef, s, quick ? 1 : 3);
  const pt = torch[i] ?? null;
  return {
    "(B,T,H,P,N)": `(${s.B},${s.T},${s.H},${s.P},${s.N})`,
    chunked: fmt(chunked),
    sequential: fmt(ref),
    pytorch: fmt(pt),
    "sequential/chunked": ratio(ref, chunked),
    "chunked/pytorch": ratio(chunked, pt),
  };
});
console.log("SSD scan, forward + backward, G=1, chunk 64 (median)");
console.table(rows);

const lin = shapes.map((s) => {
  const t1 = time(ssdScanChunked, s, reps);
  const t4 = time(ssdScanChunked, { ...s, T: 4 * s.T }, quick ? 1 : 3);
  return {
    "(B,H,P,N)": `(${s.B},${s.H},${s.P},${s.N})`,
    T: s.T,
    "time(T)": fmt(t1),
    "time(4T)": fmt(t4),
    "time(4T)/time(T)": (t4.cpu / t1.cpu).toFixed(2),
  };
});
console.log("Chunked scan cost vs sequence length (linear ⇒ ratio ≈ 4)");
console.table(lin);

await startThreadPool(2);
const thr = shapes.map((s) => {
  const t1 = time(ssdScanChunked, s, reps);
  return { shape: `(${s.B},${s.T},${s.H},${s.P},${s.N})`, t1 };
});
await stopThreadPool();
const serialWall = shapes.map((s) => time(ssdScanChunked, s, reps).wall);
console.log("Chunked scan on a 2-thread pool (wall clock, median)");
console.table(
  thr.map((r, i) => ({
    "(B,T,H,P,N)": r.shape,
    "1 thread": `${ms(serialWall[i]!)} ms`,
    "2 threads": `${ms(r.t1.wall)} ms`,
    speed_up: `${(serialWall[i]! / r.t1.wall).toFixed(2)}×`,
  })),
);
