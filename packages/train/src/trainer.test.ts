import { cpuBackendOps, LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { installThreadGovernor, ThreadGovernor } from "@loop/tensor";
import { currentKernels, threadCount } from "@loop/tensor/kernel";
import { startThreadPool, stopThreadPool } from "@loop/tensor/node";
import { countingGemm, tinyModelConfig } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { deviceStepEngine } from "./device-step-engine.js";
import { deviceTraining } from "./device-training.js";
import { freezeForStage } from "./objective.js";
import { resolveTrainOptions } from "./options.js";
import type { TrainableModel } from "./trainable-model.js";
import { STEP_PROGRESS, Trainer } from "./trainer.js";

const task = pHop({ alphabet: 3, length: 10, hops: 1 });
const base = tinyModelConfig(task.vocabSize);

describe("Trainer", () => {
  it("lowers the loss on a fixed task and is deterministic", () => {
    const run = () => {
      const t = new Trainer(
        new LoopedModel(parseConfig({ ...base, backbone: "mamba" }), { seed: 3 }),
        task,
        resolveTrainOptions({ steps: 40, batchSize: 16, lr: 1e-2, warmupSteps: 5, seed: 1 }),
      );
      const losses: number[] = [];
      while (!t.done) losses.push(t.trainStep().loss);
      return losses;
    };
    const a = run();
    expect(run()).toEqual(a);
    const first = a.slice(0, 5).reduce((x, y) => x + y) / 5;
    const last = a.slice(-5).reduce((x, y) => x + y) / 5;
    expect(last).toBeLessThan(first);
  });

  it("trains any model with the TrainableModel interface, not only the LoopedModel class", () => {
    const inner = new LoopedModel(parseConfig({ ...base, backbone: "mamba" }), { seed: 3 });
    const calls: string[] = [];
    // a model of one's own: a plain object that delegates its forward (and records the calls)
    const own: TrainableModel = {
      config: inner.config,
      exitGate: null,
      parameters: () => inner.parameters(),
      forward: (tokens, opts) => {
        calls.push(opts.steps);
        return inner.forward(tokens, opts);
      },
    };
    const opts = resolveTrainOptions({ steps: 3, batchSize: 4, lr: 1e-2, warmupSteps: 1 });
    const before = Array.from(inner.parameters()[0]!.tensor.data);
    const t = new Trainer(own, task, opts);
    while (!t.done) expect(Number.isFinite(t.trainStep().loss)).toBe(true);
    expect(calls).toEqual(["last", "last", "last"]);
    expect(Array.from(inner.parameters()[0]!.tensor.data)).not.toEqual(before);
  });

  it("a long step of many micro-batches says how far it has got", () => {
    const lines: string[] = [];
    const model = new LoopedModel(parseConfig({ ...base, backbone: "mamba" }), { seed: 3 });
    const o = { steps: 2, batchSize: 2, gradAccum: 4, warmupSteps: 0 };
    const t = new Trainer(model, task, resolveTrainOptions(o), null, null, (l) => lines.push(l));
    // (every micro-batch past the first counts as "long" here: a line each)
    const was = STEP_PROGRESS.ms;
    STEP_PROGRESS.ms = 0;
    try {
      t.trainStep();
    } finally {
      STEP_PROGRESS.ms = was;
    }
    expect(lines.map((l) => l.replace(/\d+ s/g, "N s"))).toEqual([
      "step 1: 1 of 4 micro-batches in N s, about N s left",
      "step 1: 2 of 4 micro-batches in N s, about N s left",
      "step 1: 3 of 4 micro-batches in N s, about N s left",
    ]);
    lines.length = 0;
    t.trainStep(); // (at the default interval a short step says nothing)
    expect(lines).toEqual([]);
  });

  it("warns when the warmup is not shorter than the schedule, and only then", () => {
    const heard = (o: Partial<Parameters<typeof resolveTrainOptions>[0]>) => {
      const lines: string[] = [];
      const model = new LoopedModel(parseConfig({ ...base, backbone: "mamba" }), { seed: 3 });
      new Trainer(model, task, resolveTrainOptions(o), null, null, (l) => lines.push(l));
      return lines;
    };
    expect(heard({ steps: 50 })).toEqual([
      "warmupSteps (50) is not below the schedule's 50 steps: every step warms up and the learning rate never decays; choose fewer warmup steps",
    ]);
    expect(heard({ steps: 40, warmupSteps: 10, scheduleSteps: 10 })).toHaveLength(1);
    expect(heard({ steps: 51 })).toEqual([]);
    expect(heard({ steps: 5, warmupSteps: 0 })).toEqual([]);
  });

  it("a thread governor that switches thread counts between steps changes no number", async () => {
    const run = () => {
      const model = new LoopedModel(parseConfig({ ...base, backbone: "mamba" }), { seed: 3 });
      const t = new Trainer(
        model,
        task,
        resolveTrainOptions({ steps: 12, batchSize: 16, lr: 1e-2, warmupSteps: 2, seed: 1 }),
      );
      const losses: number[] = [];
      const threads: number[] = [];
      while (!t.done) {
        losses.push(t.trainStep().loss);
        threads.push(threadCount());
      }
      return { losses, threads, weights: model.parameters().map((p) => Array.from(p.tensor.data)) };
    };
    const alone = run(); // no pool: one thread
    await startThreadPool(2);
    try {
      // every probe switches (margin ∞): the steps alternate between 2 threads and 1
      const g = new ThreadGovernor({
        max: 2,
        warmup: 0,
        probeSteps: 1,
        interval: 1,
        margin: Infinity,
      });
      installThreadGovernor(g);
      const governed = run();
      expect(g.decisions.filter((d) => d.from !== d.to).length).toBeGreaterThanOrEqual(3);
      expect(new Set(governed.threads)).toEqual(new Set([1, 2]));
      expect(governed.losses).toEqual(alone.losses);
      expect(governed.weights).toEqual(alone.weights);
    } finally {
      installThreadGovernor(null);
      await stopThreadPool();
    }
  }, 60_000);

  it("steps on the kernels it is given (a backend's), not the registry's, with the same numbers", () => {
    const now = currentKernels();
    const counting = countingGemm(now);
    const run = (kernels: typeof now | null) => {
      const model = new LoopedModel(parseConfig({ ...base, backbone: "mamba" }), { seed: 3 });
      const opts = resolveTrainOptions({ steps: 3, batchSize: 8, lr: 1e-2, warmupSteps: 0 });
      const t = new Trainer(model, task, opts, null, kernels);
      const losses: number[] = [];
      while (!t.done) losses.push(t.trainStep().loss);
      return { losses, weights: model.parameters().map((p) => Array.from(p.tensor.data)) };
    };
    const on = run(counting.kernels);
    // every step's GEMMs ran on them (0 without trainStep's withKernels, checked once), and the
    // registry's came back after
    expect(counting.calls()).toBeGreaterThan(0);
    expect(currentKernels().gemm.fn).toBe(now.gemm.fn);
    const counted = counting.calls();
    expect(run(null)).toEqual(on);
    expect(counting.calls()).toBe(counted);
  });

  it("gate2 trains only the gate: the backbone gets no gradient and does not move", () => {
    const model = new LoopedModel(parseConfig({ ...base, backbone: "mamba", exit_gate: true }), {
      seed: 4,
    });
    const before = model.parameters().map((p) => Float32Array.from(p.tensor.data));
    freezeForStage(model, "gate2");
    const t = new Trainer(
      model,
      task,
      resolveTrainOptions({ stage: "gate2", steps: 3, batchSize: 8, lr: 1e-2, warmupSteps: 0 }),
    );
    while (!t.done) t.trainStep();
    model.parameters().forEach((p, i) => {
      const moved = p.tensor.data.some((v, j) => v !== before[i]![j]);
      expect(moved, p.name).toBe(p.name.startsWith("exit_gate."));
      if (!p.name.startsWith("exit_gate.")) expect(p.tensor.grad).toBeNull();
    });
  });

  it("gate1 trains backbone and gate; pretrain leaves the gate alone; gate stages need a gate", () => {
    const model = new LoopedModel(parseConfig({ ...base, backbone: "mamba", exit_gate: true }), {
      seed: 5,
    });
    const gateBefore = Float32Array.from(model.exitGate!.weight.data);
    freezeForStage(model, "pretrain");
    const t = new Trainer(
      model,
      task,
      resolveTrainOptions({ steps: 2, batchSize: 8, warmupSteps: 0 }),
    );
    while (!t.done) t.trainStep();
    expect(Array.from(model.exitGate!.weight.data)).toEqual(Array.from(gateBefore));
    freezeForStage(model, "gate1");
    const g1 = new Trainer(
      model,
      task,
      resolveTrainOptions({ stage: "gate1", steps: 2, batchSize: 8, warmupSteps: 0 }),
    );
    while (!g1.done) g1.trainStep();
    expect(Array.from(model.exitGate!.weight.data)).not.toEqual(Array.from(gateBefore));
    const plain = new LoopedModel(parseConfig({ ...base, backbone: "mamba" }));
    expect(() => new Trainer(plain, task, resolveTrainOptions({ stage: "gate1" }))).toThrow(
      /needs a model with an exit gate/,
    );
  });

  it("changes no requiresGrad flag itself: a model not prepared for the stage is an error", () => {
    const model = new LoopedModel(parseConfig({ ...base, backbone: "mamba", exit_gate: true }));
    const opts = resolveTrainOptions({ stage: "gate2", steps: 1, batchSize: 4 });
    expect(() => new Trainer(model, task, opts)).toThrow(
      /stage gate2 does not train backbone\.embeddings\.weight, but its requiresGrad is true; call freezeForStage\(model, "gate2"\) first/,
    );
    expect(model.parameters().every((p) => p.tensor.requiresGrad)).toBe(true);
    const trained = freezeForStage(model, "gate2");
    expect(trained.map((p) => p.name)).toEqual(["exit_gate.weight", "exit_gate.bias"]);
    for (const p of model.parameters())
      expect(p.tensor.requiresGrad, p.name).toBe(p.name.startsWith("exit_gate."));
    expect(() => new Trainer(model, task, opts)).not.toThrow();
  });

  it("blockLr per-loop trains the looped block at lr/R and everything else at lr, on every backend", async () => {
    const cfg = parseConfig({ ...base, backbone: "mamba", n_loops: 4, loop_norm: true });
    const firstStep = (blockLr: "full" | "per-loop") => {
      const model = new LoopedModel(cfg, { seed: 3 });
      const before = model.parameters().map((p) => Float32Array.from(p.tensor.data));
      const t = new Trainer(
        model,
        task,
        resolveTrainOptions({ steps: 5, batchSize: 8, lr: 1e-2, warmupSteps: 0, blockLr }),
      );
      t.trainStep();
      return {
        t,
        delta: model.parameters().map((p, i) => p.tensor.data.map((x, j) => x - before[i]![j]!)),
      };
    };
    const full = firstStep("full");
    const per = firstStep("per-loop");
    // the optimiser sees the scale on the block's parameters only (norm_f: loop_norm is on)
    const scales = Object.fromEntries(per.t.optimizer.params.map((p) => [p.name, p.lrScale]));
    expect(scales["backbone.layers.0.mixer.in_proj.weight"]).toBe(0.25);
    expect(scales["backbone.norm_f.weight"]).toBe(0.25);
    expect(scales["backbone.embeddings.weight"]).toBeUndefined();
    expect(full.t.optimizer.params.every((p) => p.lrScale === undefined)).toBe(true);
    // AdamW's update (decay included) is linear in lr at equal gradients: the block moves 1/R as far
    per.t.optimizer.params.forEach((p, i) => {
      const d = per.delta[i]!;
      const f = full.delta[i]!;
      const k = p.lrScale ?? 1;
      let moved = 0;
      for (let j = 0; j < d.length; j++) {
        expect(d[j]).toBeCloseTo(k * f[j]!, 6); // (float32 weights: ~1e-7 rounding)
        moved += Math.abs(f[j]!);
      }
      if (p.name === "backbone.layers.0.mixer.in_proj.weight") expect(moved).toBeGreaterThan(0);
    });
    // on a device copy (the generic engine over cpuBackendOps): the same per-parameter rates
    const o = resolveTrainOptions({ steps: 5, batchSize: 8, blockLr: "per-loop" });
    const onDevice = new LoopedModel(cfg, { seed: 3 });
    const dev = new Trainer(
      onDevice,
      task,
      o,
      deviceStepEngine(deviceTraining(onDevice, cpuBackendOps, o), o),
    );
    while (!dev.done) await dev.nextStep();
    await dev.sync();
    const onCpu = new LoopedModel(cfg, { seed: 3 });
    const cpu = new Trainer(onCpu, task, o);
    while (!cpu.done) cpu.trainStep();
    const atLr = new LoopedModel(cfg, { seed: 3 });
    const f = new Trainer(atLr, task, resolveTrainOptions({ steps: 5, batchSize: 8 }));
    while (!f.done) f.trainStep();
    const w = (m: LoopedModel) => m.parameters().flatMap((p) => Array.from(p.tensor.data));
    const gap = (a: number[], b: number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));
    expect(gap(w(onDevice), w(onCpu))).toBeLessThan(1e-5);
    expect(gap(w(onCpu), w(atLr))).toBeGreaterThan(2e-4);
    expect(() => resolveTrainOptions({ blockLr: "half" as never })).toThrow(
      /blockLr must be one of full, per-loop, got "half"/,
    );
  });

  it("validates options by name", () => {
    expect(() => resolveTrainOptions({ steps: 0 })).toThrow(/steps must be an integer ≥ 1, got 0/);
    expect(() => resolveTrainOptions({ lr: -1 })).toThrow(/lr must be > 0/);
    expect(() => resolveTrainOptions({ stage: "x" as never })).toThrow(
      /stage must be one of pretrain, gate1, gate2/,
    );
  });
});
