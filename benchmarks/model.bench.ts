/**
 * Whole-model training step — forward, backward, AdamW — in tokens/s on the four configurations
 * of the first speed issue and the three experiment-shaped ones of the second (p-hop, Mano;
 * lib/training-step.ts), side by side with an eager PyTorch transcription of the same model
 * (benchmarks/torch/model.py), the two alternated per configuration (see `run`). GFLOP/s use
 * the model's own FLOP accounting (`flopsPerToken(cfg, { seqLen }).trainPerToken`, docs/model.md §7;
 * one LM head, as the step trains on logits(R) only: `finalLoss`).
 *
 * Kernels: the native ones (C compiled on this machine, `enableNativeKernels`) when they build,
 * as the CLI runs them; the portable ones (WebAssembly GEMM + JS loops, what a browser runs) are
 * measured as well on the largest thread count, for the speed-up native brings.
 *
 * The step is the trainer's (packages/train Trainer.trainStep): one withScratch scope holding
 * forward, backward of the final-loop cross-entropy, and the AdamW update.
 */
import { flopsPerToken, LoopedModel, type ModelConfigInput, makeConfig } from "@loop/looped";
import { Rng } from "@loop/tensor";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";
import { type GpuCounters, gpuBackendOps, zeroCounters } from "@loop/webgpu";
import {
  breakdownText,
  type DispatchBreakdown,
  type DispatchFormula,
  disableNativeKernels,
  dispatchFormula,
  enableNativeKernels,
} from "looplm";
import type { BenchContext } from "./lib/context.js";
import type { GpuBench } from "./lib/gpu.js";
import { compareWithNative } from "./lib/gpu-compare.js";
import type { Row } from "./lib/table.js";
import { median } from "./lib/timer.js";
import { torchConfig } from "./lib/torch-config.js";
import { type BenchConfig, CONFIGS, makeStep, selectedConfigs } from "./lib/training-step.js";

export const name = "model";
export const description =
  "whole-model training step (forward + backward + AdamW) tokens/s vs eager PyTorch, GFLOP/s";

interface TorchResult {
  torch: string;
  results: {
    name: string;
    threads: number;
    seconds: number;
    cpu_seconds: number;
    samples: number[];
    cpu_samples: number[];
  }[];
}

export async function run(ctx: BenchContext): Promise<void> {
  const configs = selectedConfigs(
    "LOOP_BENCH_MODEL_CONFIGS",
    CONFIGS.map((_, i) => i + 1),
  );
  // native steps are short: more of them make the median steadier on a shared VM
  const timing = (kernels: string, round: number) =>
    ctx.quick
      ? { warmup: 1, repeats: 1 }
      : kernels === "native"
        ? { warmup: round === 0 ? 2 : 1, repeats: 5 }
        : { warmup: 1, repeats: 3 };
  // The load of this shared machine drifts over minutes: each (config, threads) pair alternates
  // our steps and PyTorch's, `rounds` times, and both figures are medians over all their rounds,
  // so that both sides see the same stretch of time. Never both at once: they would share cores.
  const rounds = ctx.quick ? 1 : 2;
  const ours: {
    c: BenchConfig;
    kernels: string;
    threads: number;
    ms: number;
    cpuMs: number;
    loss: number;
    torch?: { seconds: number; cpuSeconds: number };
  }[] = [];
  const native = await enableNativeKernels();
  if (!native.enabled) ctx.log(`native kernels unavailable (${native.reason}): portable only`);
  const haveTorch = await ctx.torchAvailable();
  if (!haveTorch)
    ctx.log('PyTorch comparison skipped: `/usr/bin/python3 -c "import torch"` failed.');
  let torchVersion = "";
  const maxThreads = Math.max(...ctx.threadCounts);
  const plan: [string, number][] = ctx.threadCounts.map((t) => [
    native.enabled ? "native" : "portable",
    t,
  ]);
  if (native.enabled) plan.push(["portable", maxThreads]);
  for (const [kernels, threads] of plan) {
    await ctx.setThreads(threads);
    if (kernels === "portable") disableNativeKernels();
    // the portable rows are compared with PyTorch's figures of their pair's native rows
    const withTorch = haveTorch && kernels === plan[0]![0];
    for (const c of configs) {
      const step = makeStep(c);
      let loss = Number.NaN;
      const wall: number[] = [];
      const cpu: number[] = [];
      const tWall: number[] = [];
      const tCpu: number[] = [];
      for (let round = 0; round < (withTorch ? rounds : 1); round++) {
        const t = await ctx.time(
          () => {
            loss = step();
          },
          timing(kernels, round),
        );
        wall.push(...t.samplesMs);
        cpu.push(...t.cpuSamplesMs);
        if (!withTorch) continue;
        const tr = (await ctx.torch("model.py", [
          JSON.stringify({
            configs: [torchConfig(c)],
            chunk: 64,
            threads: [threads],
            // a fresh process each round: two untimed steps, as our first round has
            warmup: ctx.quick ? 1 : 2,
            reps: ctx.quick ? 1 : 3,
          }),
        ])) as TorchResult;
        torchVersion = tr.torch;
        tWall.push(...tr.results[0]!.samples);
        tCpu.push(...tr.results[0]!.cpu_samples);
      }
      const row = { c, kernels, threads, ms: median(wall), cpuMs: median(cpu), loss };
      ours.push(
        tWall.length > 0
          ? { ...row, torch: { seconds: median(tWall), cpuSeconds: median(tCpu) } }
          : row,
      );
      ctx.log(
        `  ${c.name}, ${kernels}, ${threads} thread(s): ${row.ms.toFixed(0)} ms/step (CPU ${row.cpuMs.toFixed(0)} ms), loss ${loss.toFixed(3)}` +
          (tWall.length > 0 ? `; PyTorch ${(1000 * median(tWall)).toFixed(0)} ms/step` : ""),
      );
    }
  }
  if (torchVersion)
    ctx.log(`PyTorch ${torchVersion}, eager, AdamW, same model (benchmarks/torch/model.py)`);

  const rows: Row[] = [];
  for (const r of ours) {
    const cfg = makeConfig(r.c.model);
    const tokens = r.c.batch * r.c.seq;
    const flops = flopsPerToken(cfg, { seqLen: r.c.seq }).trainPerToken * tokens;
    const gflops = flops / r.ms / 1e6;
    const peak = (await ctx.peak(r.threads)).gflops;
    const row: Row = {
      config: r.c.name,
      "B×T": `${r.c.batch}×${r.c.seq}`,
      kernels: r.kernels,
      threads: r.threads,
      "ms/step": Math.round(r.ms),
      "tok/s": Math.round((tokens / r.ms) * 1000),
      "tok/CPU-s": Math.round((tokens / r.cpuMs) * 1000),
      "GFLOP/s": Number(gflops.toFixed(2)),
      "% peak": Number(((100 * gflops) / peak).toFixed(2)),
    };
    const tr = r.torch ?? ours.find((x) => x.c === r.c && x.threads === r.threads)?.torch;
    if (tr !== undefined) {
      row["torch tok/s"] = Math.round(tokens / tr.seconds);
      row["torch tok/CPU-s"] = Math.round(tokens / tr.cpuSeconds);
      row["ours/torch"] = Number((tr.seconds / (r.ms / 1000)).toFixed(2));
      row["ours/torch (CPU)"] = Number((tr.cpuSeconds / (r.cpuMs / 1000)).toFixed(2));
    }
    rows.push(row);
  }
  ctx.table(
    rows,
    "training step = forward + backward + AdamW (lr 1e-3); medians of timed steps, ours and " +
      "PyTorch's alternated in rounds per configuration; % of the fp32 " +
      "peak of the threads used; tok/CPU-s = tokens per second of process CPU time (robust to " +
      "other load on the machine); ours/torch > 1 means we are faster",
  );
}

/** On a CPU emulation (SwiftShader) only that the path runs counts: configuration 5, 2 rows. */
const EMULATED = (): BenchConfig[] => [{ ...CONFIGS[4]!, batch: 2 }];

/** The step's options: those of makeStep's CPU step. */
const gpuOptions = () => resolveTrainOptions({ lr: 1e-3, clip: 0, weightDecay: 0 });

/**
 * One training step of the GPU model (the generic device step engine) on fixed random tokens;
 * `counted` receives the context's counters of each call (the last timed step's are kept).
 */
function gpuStep(
  gpu: GpuBench,
  c: BenchConfig,
  counted: (n: GpuCounters, peakBytes: number) => void,
): () => Promise<number> {
  const cfg = makeConfig({ tie_embeddings: true, ...c.model });
  // the same initial weights and tokens as makeStep's CPU model
  const o = gpuOptions();
  const model = new LoopedModel(cfg, { seed: 0 });
  const engine = deviceStepEngine(deviceTraining(model, gpuBackendOps(gpu.ctx), o), o);
  const rng = new Rng(1);
  const n = c.batch * c.seq;
  const tokens = new Int32Array(n);
  const targets = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    tokens[i] = rng.int(cfg.vocab_size);
    targets[i] = rng.int(cfg.vocab_size);
  }
  const batch = { tokens, targets, shape: [c.batch, c.seq] as [number, number] };
  return async () => {
    gpu.ctx.resetCounters();
    gpu.ctx.resetPeak();
    const loss = (await engine.step([batch], o.lr)).loss;
    counted(gpu.ctx.counters(), gpu.ctx.memory().peakBytes);
    return loss;
  };
}

/**
 * The dispatch formula of a configuration's model with one mixer kind throughout (its Mamba-2 or
 * its attention layers), from steps of it at (L, R) = (1, 1), (1, 2), (2, 1) on the
 * configuration's own batch × sequence (looplm's `dispatchFormula`: how many row blocks a column
 * sum has and whether a GEMM splits K follow B·T); null where that model is not valid.
 */
async function formulaOf(
  gpu: GpuBench,
  c: BenchConfig,
  backbone: "mamba" | "transformer",
): Promise<DispatchBreakdown | null> {
  const { attn_layers: _, ...model } = c.model as ModelConfigInput & { attn_layers?: unknown };
  // a Mamba-2 configuration's attention variant needs an MLP (its width changes no count)
  const mlp = model.mlp ?? { d_ff: 4 * model.d_model };
  const config = {
    tie_embeddings: true,
    ...model,
    backbone,
    ...(backbone === "transformer" ? { mlp } : {}),
  };
  try {
    makeConfig(config);
  } catch {
    return null;
  }
  return dispatchFormula(gpu.ctx, config, { batch: c.batch, seq: c.seq }, gpuOptions());
}

const formulaText = (f: DispatchFormula) =>
  `${f.fixed} + ${f.perLayerApplication}·L·R + ${f.perLayer}·L`;

/**
 * Dispatches of one layer application, forward + backward: the formula's a (the weights' update,
 * b, runs once per layer whatever R, and is in the log's formula). Issue 31's targets are on a.
 */
const perApplication = (f: DispatchFormula | null) => (f === null ? "" : f.perLayerApplication);

/**
 * `--backend webgpu`: the whole training step (forward, final-loop cross-entropy, backward,
 * AdamW; one read-back of the loss) of the model on the device (@loop/train's deviceTraining
 * over gpuBackendOps, under the generic device step engine) beside the native CPU step of
 * the same model in the same run: tokens/s, GFLOP/s (`flopsPerToken`), % of the GPU's fp32 peak
 * and the speed-up (the target: ≥ 20× the 2-core native step on configurations 2–4).
 */
export async function runWebgpu(ctx: BenchContext, gpu: GpuBench): Promise<void> {
  const configs = gpu.emulated
    ? EMULATED()
    : selectedConfigs(
        "LOOP_BENCH_MODEL_CONFIGS",
        CONFIGS.map((_, i) => i + 1),
      );
  const counters: GpuCounters[] = configs.map(zeroCounters);
  const peaks = configs.map(() => 0);
  const rows = await compareWithNative(
    ctx,
    gpu,
    "config",
    configs.map((c, i) => ({
      label: `${c.name} ${c.batch}×${c.seq}`,
      tokens: c.batch * c.seq,
      flops: flopsPerToken(makeConfig(c.model), { seqLen: c.seq }).trainPerToken * c.batch * c.seq,
      gpu: gpuStep(gpu, c, (n, peak) => {
        counters[i] = n;
        peaks[i] = peak;
      }),
      cpu: makeStep(c),
    })),
    ctx.quick ? { warmup: 1, repeats: 1 } : { warmup: 1, repeats: 5 },
  );
  // The command encoding of each step (the last timed one: a steady step) and the dispatches
  // of a layer application, from each mixer kind's formula in L and R.
  for (const [i, c] of configs.entries()) {
    const n = counters[i]!;
    const mamba = await formulaOf(gpu, c, "mamba");
    const attn = await formulaOf(gpu, c, "transformer");
    for (const [kind, f] of [
      ["Mamba-2", mamba],
      ["Transformer", attn],
    ] as const)
      if (f) {
        ctx.log(`  ${c.name}: dispatches per step of its ${kind} model = ${formulaText(f)}`);
        ctx.log(`    per layer application, by kernel: ${breakdownText(f, "perLayerApplication")}`);
      }
    Object.assign(rows[i]!, {
      "dispatches/step": n.dispatches,
      "Mamba-2 disp/layer-app": perApplication(mamba),
      "attn disp/layer-app": perApplication(attn),
      "bind groups/step": n.bindGroupsCreated,
      "µs encode/dispatch": n.dispatches
        ? Number(((1000 * n.encodeMs) / n.dispatches).toFixed(2))
        : "",
      "peak MiB/step": Number((peaks[i]! / 2 ** 20).toFixed(2)),
    });
  }
  ctx.table(
    rows,
    `training step = forward + backward + AdamW on ${gpu.adapter} and on the CPU kernels; ` +
      "medians; GFLOP/s from the model's FLOP count (docs/model.md §7); webgpu/cpu > 1: the GPU is faster; " +
      "dispatches/step, bind groups/step (created) and µs encode/dispatch (wall-clock time in GpuContext.run) " +
      "counted on the last timed step; peak MiB/step: the most device memory the step held at once " +
      "(GpuContext.memory(): weights, gradients, moments and live activations, in the pool's size " +
      "classes; activations freed as the backward consumes them); X disp/layer-app = a of the " +
      "formula fixed + a·L·R + b·L of the configuration's model with X layers only (solved from " +
      "steps at (L, R) = (1, 1), (1, 2), (2, 1)): forward + backward of one layer at one " +
      "application (b, the weights' update once per layer, is in the log)",
  );
}
