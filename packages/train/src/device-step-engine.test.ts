/**
 * The generic device step engine, run on the CPU's own TrainOps, against the CPU Trainer's step
 * (the same `encodeStep`, run synchronously): the same losses and weights bit for bit, with and
 * without clipping (cpuTrainOps clips by the norm in double), the reported norm rounded to
 * float32 (the engine reads it back from a float32 tensor); the stage's parameters trained and
 * the others frozen; a non-finite step leaves weights and moments untouched. The GPU runs the
 * same engine (looplm gpu-training.test.ts).
 */
import { LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { cpuTrainOps, type IntTensor, type Tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { type DeviceTraining, deviceStepEngine } from "./device-step-engine.js";
import { freezeForStage, stageLoss } from "./objective.js";
import { resolveTrainOptions, type TrainOptions } from "./options.js";
import { NonFiniteError, Trainer } from "./trainer.js";

const task = pHop({ alphabet: 3, length: 10, hops: 1 });
const config = (gate: boolean) =>
  parseConfig({
    vocab_size: task.vocabSize,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
    backbone: "mamba",
    exit_gate: gate,
    ssm: { d_state: 4, headdim: 8, chunk_size: 4 },
  });

/** The CPU model as a "device" copy of itself: the engine trains the model's own tensors. */
function cpuTraining(
  model: LoopedModel,
  o: TrainOptions,
  loss = (t: IntTensor, y: IntTensor, s: IntTensor | null): Tensor =>
    stageLoss(model, t, y, o, s ? s.data : null),
): DeviceTraining<Tensor, IntTensor> {
  return {
    name: "cpu (device step engine)",
    ops: cpuTrainOps,
    parameters: model.parameters(),
    stageLoss: loss,
    pullWeights: async () => {},
    pushWeights: () => {},
  };
}

async function both(train: Partial<TrainOptions>, gate = false) {
  const o = resolveTrainOptions({ batchSize: 4, lr: 1e-2, warmupSteps: 2, seed: 1, ...train });
  const run = async (engineOn: boolean) => {
    const model = new LoopedModel(config(gate), { seed: 3 });
    freezeForStage(model, o.stage);
    const engine = engineOn ? deviceStepEngine(cpuTraining(model, o), o) : null;
    const t = new Trainer(model, task, o, engine);
    const steps = [];
    while (!t.done) steps.push(await t.nextStep());
    await t.sync();
    return { model, trainer: t, steps };
  };
  return { cpu: await run(false), dev: await run(true) };
}

const weights = (m: LoopedModel) => m.parameters().map((p) => Array.from(p.tensor.data));

describe("deviceStepEngine on the CPU's TrainOps against the CPU Trainer", () => {
  it("without clipping: the same losses and weights bit for bit, the norm rounded to float32", async () => {
    const { cpu, dev } = await both({ steps: 6, clip: 0, gradAccum: 2 });
    expect(dev.steps.map((s) => s.loss)).toEqual(cpu.steps.map((s) => s.loss));
    expect(dev.steps.map((s) => s.grad_norm)).toEqual(
      cpu.steps.map((s) => Math.fround(s.grad_norm)),
    );
    expect(weights(dev.model)).toEqual(weights(cpu.model));
    // the moments the engine hands back for a checkpoint are the CPU optimizer's
    expect(dev.trainer.getState().optimizer).toEqual(cpu.trainer.getState().optimizer);
  });

  it("with clipping: the same losses and weights bit for bit", async () => {
    const { cpu, dev } = await both({ steps: 6, clip: 0.05 });
    expect(dev.steps.map((s) => s.loss)).toEqual(cpu.steps.map((s) => s.loss));
    expect(dev.steps.map((s) => s.grad_norm)).toEqual(
      cpu.steps.map((s) => Math.fround(s.grad_norm)),
    );
    expect(weights(dev.model)).toEqual(weights(cpu.model));
    // the clip was active: the pre-clip norm is above it
    expect(cpu.steps[0]!.grad_norm).toBeGreaterThan(0.05);
  });

  it("gate2 trains the gate only and freezes the rest", async () => {
    const { cpu, dev } = await both({ steps: 3, stage: "gate2" }, true);
    expect(dev.steps.map((s) => s.loss)).toEqual(cpu.steps.map((s) => s.loss));
    const fresh = new LoopedModel(config(true), { seed: 3 });
    const before = new Map(fresh.parameters().map((p) => [p.name, p.tensor.data]));
    for (const p of dev.model.parameters()) {
      expect(p.tensor.requiresGrad, p.name).toBe(p.name.startsWith("exit_gate."));
      const moved = p.tensor.data.some((v, j) => v !== before.get(p.name)![j]);
      expect(moved, p.name).toBe(p.name.startsWith("exit_gate."));
    }
    expect(() =>
      deviceStepEngine(
        cpuTraining(new LoopedModel(config(false), { seed: 3 }), resolveTrainOptions({})),
        resolveTrainOptions({ stage: "gate1" }),
      ),
    ).toThrow(/stage gate1 needs a model with an exit gate/);
  });

  it("a non-finite loss leaves weights and moments untouched; the Trainer stops on it", async () => {
    const o = resolveTrainOptions({ steps: 3, batchSize: 2, lr: 1e-2, warmupSteps: 1, seed: 1 });
    const model = new LoopedModel(config(false), { seed: 3 });
    freezeForStage(model, o.stage);
    let poison = false;
    const dev = cpuTraining(model, o, (t, y, s) => {
      const l = stageLoss(model, t, y, o, s ? s.data : null);
      if (poison) l.data[0] = Number.NaN; // the loss read back is NaN; its backward still runs
      return l;
    });
    const engine = deviceStepEngine(dev, o);
    const trainer = new Trainer(model, task, o, engine);
    await trainer.nextStep();
    const w = weights(model);
    poison = true;
    await expect(trainer.nextStep()).rejects.toThrow(NonFiniteError);
    expect(weights(model)).toEqual(w);
    expect((await engine.pull()).step).toBe(1);
    await expect(engine.step([], 1e-3)).rejects.toThrow(/at least one batch/);
  });
});
