/**
 * Training on webgpu follows the CPU: for each backbone a tiny looped model trains 50 steps with
 * @loop/train's Trainer on the portable CPU kernels and, from the same initial weights and the
 * same batches, on the GPU (@loop/train's generic deviceStepEngine over @loop/webgpu's
 * gpuBackendOps through deviceTraining), and the two loss curves agree within float32
 * tolerance. Also: a gated stage (gate1), gradient accumulation, and the state a checkpoint
 * needs (weights and AdamW moments) copied back to the CPU. Dawn + SwiftShader here (slow: tiny
 * shapes); skipped with one printed line where no WebGPU adapter exists, a failure under CI.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoopedModel } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { gpuForTests } from "@loop/test-support";
import {
  deviceStepEngine,
  deviceTraining,
  freezeForStage,
  resolveTrainOptions,
  Trainer,
  type TrainOptions,
} from "@loop/train";
import { gpuBackendOps } from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";
import { describe, expect, it } from "vitest";
import { BACKBONES, CHECKPOINTED, task, tinyModel, trainOnEngine } from "./gpu-tiny.test-util.js";

const ctx = await gpuForTests("webgpu training", createNodeGpuContext);
/** The webgpu backend's training step, as `looplm train --backend webgpu` builds it. */
const gpuStepEngine = (model: LoopedModel, o: TrainOptions) =>
  deviceStepEngine(deviceTraining(model, gpuBackendOps(ctx!), o), o);

/** Loss per step on the CPU and on the GPU from the same model and data. */
async function curves(
  extra: Record<string, unknown>,
  train: Partial<TrainOptions>,
): Promise<{
  cpu: number[];
  gpu: number[];
  cpuModel: LoopedModel;
  gpuModel: LoopedModel;
  gpuTrainer: Trainer;
}> {
  const opts = resolveTrainOptions({ batchSize: 2, lr: 1e-2, warmupSteps: 5, seed: 1, ...train });
  const cpuModel = tinyModel(extra, 3);
  const gpuModel = tinyModel(extra, 3);
  freezeForStage(cpuModel, opts.stage);
  freezeForStage(gpuModel, opts.stage);
  const cpuTrainer = new Trainer(cpuModel, task, opts);
  const engine = gpuStepEngine(gpuModel, opts);
  const gpuTrainer = new Trainer(gpuModel, task, opts, engine);
  const cpu: number[] = [];
  const gpu: number[] = [];
  try {
    while (!cpuTrainer.done) cpu.push(cpuTrainer.trainStep().loss);
    // one step in flight (the pipelined engine), none after the last
    while (!gpuTrainer.done)
      gpu.push((await gpuTrainer.nextStep({ ahead: gpuTrainer.step + 1 < opts.steps })).loss);
    await gpuTrainer.sync();
  } finally {
    engine.dispose();
  }
  return { cpu, gpu, cpuModel, gpuModel, gpuTrainer };
}

/** Loss curves agree: float32 rounding differs between the kernels and grows slowly with steps. */
function expectSameCurve(cpu: number[], gpu: number[]): void {
  expect(gpu.length).toBe(cpu.length);
  cpu.forEach((c, i) => {
    expect(Math.abs(gpu[i]! - c), `step ${i + 1}: gpu ${gpu[i]} cpu ${c}`).toBeLessThan(
      2e-3 * (1 + Math.abs(c)),
    );
  });
  // and the model learned something
  expect(cpu.at(-1)!).toBeLessThan(cpu[0]!);
}

// SwiftShader runs a step of these tiny models in about half a second on a quiet core (seconds on
// a busy one): each test gets a long timeout rather than fewer steps.
const SLOW = { timeout: 900_000 };

describe.runIf(ctx)("training on webgpu follows the CPU loss curve (50 steps)", () => {
  for (const [name, extra] of Object.entries(BACKBONES))
    it(name, SLOW, async () => {
      const { cpu, gpu, cpuModel, gpuModel } = await curves(extra, { steps: 50 });
      expectSameCurve(cpu, gpu);
      // the weights copied back at the end are the CPU run's, within float32 drift
      const a = cpuModel.parameters();
      gpuModel.parameters().forEach((p, i) => {
        const want = a[i]!.tensor.data;
        let worst = 0;
        p.tensor.data.forEach((v, j) => {
          worst = Math.max(worst, Math.abs(v - want[j]!));
        });
        expect(worst, p.name).toBeLessThan(1e-2);
      });
    });
});

describe.runIf(ctx)("training on webgpu: stages, accumulation and checkpoint state", () => {
  it(
    "gate1 with two micro-batches per step, and the AdamW moments come back for checkpoints",
    SLOW,
    async () => {
      const { cpu, gpu, cpuModel, gpuTrainer } = await curves(
        { backbone: "mamba", exit_gate: true },
        { stage: "gate1", steps: 6, gradAccum: 2 },
      );
      expectSameCurve(cpu, gpu);
      const st = gpuTrainer.getState();
      expect(st.optimizer.step).toBe(6);
      const names = cpuModel.parameters().map((p) => p.name);
      expect(Object.keys(st.optimizer.m).sort()).toEqual([...names].sort());
      for (const m of Object.values(st.optimizer.m)) expect(m.some((v) => v !== 0)).toBe(true);
    },
  );

  it("activation checkpointing follows the CPU's checkpointed curve", SLOW, async () => {
    const { cpu, gpu } = await curves(BACKBONES.hybrid, { steps: 6, checkpointing: true });
    // (too few steps to require learning: the curves' agreement is the point)
    expect(gpu.length).toBe(cpu.length);
    cpu.forEach((c, i) => {
      expect(Math.abs(gpu[i]! - c), `step ${i + 1}: gpu ${gpu[i]} cpu ${c}`).toBeLessThan(
        2e-3 * (1 + Math.abs(c)),
      );
    });
  });

  it("gate2 moves only the gate", SLOW, async () => {
    const { cpu, gpu, gpuModel } = await curves(
      { backbone: "mamba", exit_gate: true },
      { stage: "gate2", steps: 4 },
    );
    expect(gpu.length).toBe(cpu.length);
    gpu.forEach((g, i) => {
      expect(Math.abs(g - cpu[i]!)).toBeLessThan(2e-3 * (1 + cpu[i]!));
    });
    const fresh = tinyModel({ backbone: "mamba", exit_gate: true }, 3);
    const before = new Map(fresh.parameters().map((p) => [p.name, p.tensor.data]));
    for (const p of gpuModel.parameters()) {
      const moved = p.tensor.data.some((v, j) => v !== before.get(p.name)![j]);
      expect(moved, p.name).toBe(p.name.startsWith("exit_gate."));
    }
  });

  it(
    "a webgpu run resumed from its checkpoint reproduces the uninterrupted run exactly",
    SLOW,
    async () => {
      const train = resolveTrainOptions(CHECKPOINTED);
      const run = async (
        runDir: string,
        seed: number,
        extra: { resume?: boolean; crashAt?: number },
      ) => {
        const model = tinyModel({ backbone: "mamba" }, seed);
        await trainOnEngine(runDir, model, gpuStepEngine(model, train), train, extra);
      };
      const log = (dir: string) =>
        readFileSync(join(dir, "log.jsonl"), "utf8")
          .trim()
          .split("\n")
          .map((l) => {
            const { step, loss, grad_norm } = JSON.parse(l);
            return { step, loss, grad_norm };
          });
      const full = mkdtempSync(join(tmpdir(), "gpu-run-full-"));
      await run(full, 1, {});
      const cut = mkdtempSync(join(tmpdir(), "gpu-run-cut-"));
      await expect(run(cut, 1, { crashAt: 3 })).rejects.toThrow(/simulated crash/);
      // a different initialisation: the checkpoint's weights and moments must replace it
      await run(cut, 99, { resume: true });
      expect(log(cut)).toEqual(log(full));
      const wa = loadCheckpoint(join(full, "final")).parameters();
      const wb = loadCheckpoint(join(cut, "final")).parameters();
      wa.forEach((p, i) => {
        expect(Array.from(wb[i]!.tensor.data), p.name).toEqual(Array.from(p.tensor.data));
      });
    },
  );
});
