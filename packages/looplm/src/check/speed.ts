/*
 * The speed section of `looplm check`: what this backend reaches on this machine. Each figure is a
 * speed case with a cost estimate (its flops over a measured rate), so that a budget drops the
 * slowest first (budget.ts): the fp32 peak (WGSL FMA loop on a GPU, the native FMA loop on the
 * CPU), GEMM GFLOP/s and % of that peak at model shapes, a training step of the benchmark
 * configurations against the native CPU step, decode tokens/s, and the GPU dispatches per layer
 * application of a training step. Figures are measured, never assumed; none is a pass/fail.
 */
import { availableParallelism } from "node:os";
import {
  cpuBackendOpsOn,
  generate,
  generateOn,
  hasDecodeOps,
  LoopedModel,
  type ModelConfigInput,
  parseConfig,
} from "@loop/looped";
import { Rng } from "@loop/tensor";
import type { CpuKernels } from "@loop/tensor/kernel";
import { measureFmaPeak } from "@loop/tensor/node";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";
import type { ComputeBackend, DeviceProbes } from "../backend.js";
import type { AnyOps } from "./op-cases.js";
import { type SpeedConfig, speedConfigs } from "./speed-configs.js";

/** One measured figure. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** How it was measured, or what it is compared with. */
  note?: string;
  /** The machine's 1-minute load average as it was measured (set by the check, not the case). */
  load?: number;
}

/** A speed case: its estimated cost in flops (for the budget), and its measurement. */
export interface SpeedCase {
  name: string;
  /** Floating-point operations it runs (its cost estimate, over the measured rate). */
  flops: number;
  run(): Promise<Figure[]>;
}

/** Whether `b`'s tensors live on a device (its launches return before the work is done). */
const inDeviceMemory = (b: ComputeBackend) => b.caps.memory === "device";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The fp32 peak this backend's figures are a percentage of (GFLOP/s), and how it was found. */
export async function measurePeak(b: ComputeBackend): Promise<Figure> {
  if (b.probes) {
    const p = await b.probes.peak();
    return { name: "fp32 peak", value: p.gflops, unit: "GFLOP/s", note: p.source };
  }
  // (the CPU's FMA loop would say nothing about a device without a peak probe)
  if (inDeviceMemory(b))
    return {
      name: "fp32 peak",
      value: Number.NaN,
      unit: "GFLOP/s",
      note: `not measured on ${b.name}: its GEMM figures stand alone`,
    };
  const threads = availableParallelism();
  const p = await measureFmaPeak(threads, { runMs: 20, repeats: 3 });
  if (!p.ok) return { name: "fp32 peak", value: Number.NaN, unit: "GFLOP/s", note: p.error };
  return {
    name: "fp32 peak",
    value: p.gflops,
    unit: "GFLOP/s",
    note: `native FMA loop (${p.isa}), ${threads} threads`,
  };
}

/** Seconds of `fn` (median of `reps` after a warm-up run). */
async function timeIt(fn: () => Promise<void>, reps: number): Promise<number> {
  await fn();
  const ts: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    ts.push((performance.now() - t0) / 1000);
  }
  return median(ts);
}

/** GEMM GFLOP/s of M×K·K×N (the GPU's tiled GEMM without transfers; the CPU's `linear`). */
function gemmCase(
  b: ComputeBackend,
  peak: () => number,
  M: number,
  K: number,
  N: number,
): SpeedCase {
  const flops = 2 * M * K * N;
  const name = `GEMM ${M}×${K}×${N}`;
  return {
    name,
    // (six timed runs: the warm-up and five; 10 GEMMs each on a device without a GEMM probe,
    // 2 on the CPU's estimate)
    flops: flops * (inDeviceMemory(b) && !b.probes ? 60 : 12),
    async run() {
      let gflops: number;
      if (b.probes) gflops = await b.probes.gemm(M, N, K);
      else {
        const ops = b.ops as AnyOps;
        const rng = new Rng(1);
        const x = ops.upload(rng.fillNormal(new Float32Array(M * K)), [M, K], { persistent: true });
        const w = ops.upload(rng.fillNormal(new Float32Array(N * K)), [N, K], { persistent: true });
        // a device's launches return at once: 10 GEMMs, then one read-back waits for them all
        // (its one M×N transfer is counted in)
        const iters = inDeviceMemory(b) ? 10 : 1;
        const s = await timeIt(async () => {
          let y: unknown = null;
          ops.noGrad(() => {
            for (let i = 0; i < iters; i++) y = ops.linear(x, w);
          });
          if (inDeviceMemory(b)) await ops.read(y);
          ops.releaseTransients();
        }, 5);
        ops.dispose(x);
        ops.dispose(w);
        gflops = (flops * iters) / s / 1e9;
      }
      return [
        { name, value: gflops, unit: "GFLOP/s", note: b.caps.gemm },
        { name: `${name} % of peak`, value: (100 * gflops) / peak(), unit: "%" },
      ];
    },
  };
}

function randomBatch(vocab: number, batch: number, seq: number) {
  const rng = new Rng(1);
  const n = batch * seq;
  const tokens = Int32Array.from({ length: n }, () => rng.int(vocab));
  const targets = Int32Array.from({ length: n }, () => rng.int(vocab));
  return { tokens, targets, shape: [batch, seq] as [number, number] };
}

/** Seconds of one training step (median of `reps`, after one) of `c` on `ops`. */
async function stepSeconds(ops: AnyOps, c: SpeedConfig, reps: number): Promise<number> {
  const o = resolveTrainOptions({ batchSize: c.batch, lr: 1e-3, warmupSteps: 0, seed: 1 });
  const model = new LoopedModel(parseConfig(c.model), { seed: 0 });
  const engine = deviceStepEngine(deviceTraining(model, ops, o), o);
  const batch = randomBatch(model.config.vocab_size, c.batch, c.seq);
  try {
    return await timeIt(async () => {
      await engine.step([batch], o.lr);
    }, reps);
  } finally {
    engine.dispose();
  }
}

/** Training-step flops: 6 per parameter per token plus the mixers' (a floor, for the estimate). */
function stepFlops(c: SpeedConfig): number {
  const cfg = parseConfig(c.model);
  const D = cfg.d_model;
  const perLayer = 12 * D * D;
  return 6 * c.batch * c.seq * (perLayer * cfg.n_layers * cfg.n_loops + D * cfg.vocab_size);
}

/** A training step of `c` on the backend, and on the native CPU kernels where it has them. */
function trainCase(b: ComputeBackend, c: SpeedConfig, native: CpuKernels | null): SpeedCase {
  const withCpu = inDeviceMemory(b) && native !== null;
  return {
    name: `training step ${c.name}`,
    flops: stepFlops(c) * (withCpu ? 40 : 4),
    async run() {
      const s = await stepSeconds(b.ops as AnyOps, c, 3);
      const tokens = c.batch * c.seq;
      const out: Figure[] = [
        {
          name: `training step ${c.name}`,
          value: s * 1000,
          unit: "ms",
          note: `GEMMs on ${b.caps.gemm}`,
        },
        { name: `training ${c.name} tokens/s`, value: tokens / s, unit: "tok/s" },
      ];
      if (withCpu) {
        const cpu = await stepSeconds(cpuBackendOpsOn(native!) as AnyOps, c, 1);
        out.push({
          name: `training step ${c.name} × native`,
          value: cpu / s,
          unit: "×",
          note: `native CPU step ${(cpu * 1000).toFixed(0)} ms on ${availableParallelism()} cores`,
        });
      }
      return out;
    },
  };
}

/** Decode tokens/s of a model of `c`'s shape: the device's full-depth decoding, or the CPU's. */
function decodeCase(b: ComputeBackend, c: SpeedConfig, tokens: number): SpeedCase {
  return {
    name: `decode ${c.name}`,
    flops: stepFlops({ ...c, batch: 1, seq: tokens }) * tokens,
    async run() {
      const model = new LoopedModel(parseConfig(c.model), { seed: 0 });
      const prompt = [1, 2, 3, 4];
      const opts = { maxNewTokens: tokens, temperature: 0 };
      const t0 = performance.now();
      if (inDeviceMemory(b)) {
        if (!hasDecodeOps(b.ops)) throw new Error(`--backend ${b.name} has no decode kernels`);
        for await (const _t of generateOn(b.ops, model, prompt, opts));
      } else generate(model, prompt, { ...opts, kernels: b.kernels });
      const s = (performance.now() - t0) / 1000;
      return [
        {
          name: `decode ${c.name} tokens/s`,
          value: tokens / s,
          unit: "tok/s",
          note: "recurrent, the state on the backend",
        },
      ];
    },
  };
}

/** GPU dispatches per layer application of a training step (single-mixer backbones). */
function dispatchCase(probes: DeviceProbes, c: SpeedConfig): SpeedCase {
  const shape = { batch: 2, seq: Math.min(c.seq, 64) };
  return {
    name: `dispatches ${c.name}`,
    flops: stepFlops({ ...c, ...shape }) * 8,
    async run() {
      const o = resolveTrainOptions({ batchSize: shape.batch, lr: 1e-3, warmupSteps: 0, seed: 1 });
      const f = await probes.dispatches(c.model as ModelConfigInput, shape, o);
      return [
        {
          name: `dispatches per layer application (${c.model.backbone})`,
          value: f.perLayerApplication,
          unit: "",
        },
        { name: `dispatches per step, fixed part (${c.model.backbone})`, value: f.fixed, unit: "" },
      ];
    },
  };
}

/** The speed cases of `b` at `size`, cheapest first (`peak` is the measured fp32 peak). */
export function speedCases(
  b: ComputeBackend,
  size: "small" | "full",
  peak: () => number,
  native: CpuKernels | null,
): SpeedCase[] {
  const configs = speedConfigs(size);
  const gemms: [number, number, number][] =
    size === "small"
      ? [
          [256, 128, 128],
          [128, 64, 192],
        ]
      : [
          [4096, 256, 768],
          [4096, 128, 384],
          [1024, 1024, 1024],
          [4096, 4096, 4096],
        ];
  const cases: SpeedCase[] = [
    ...gemms.map(([M, K, N]) => gemmCase(b, peak, M, K, N)),
    ...configs.map((c) => trainCase(b, c, native)),
    decodeCase(b, configs[0]!, size === "small" ? 4 : 32),
  ];
  if (b.probes) {
    for (const c of configs.filter((c) => c.model.backbone !== "hybrid").slice(0, 1))
      cases.push(dispatchCase(b.probes, c));
  }
  return cases.sort((a, c) => a.flops - c.flops);
}
