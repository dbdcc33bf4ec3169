/**
 * Dynamic loss scaling: the scale's rule (halve on overflow, double after `interval` clean steps,
 * within [min, max]), and `lossScaledStepEngine` run on the CPU's own TrainOps against the plain
 * `deviceStepEngine`. Scaling by a power of two and dividing again is exact in float arithmetic,
 * so without an overflow the scaled engine gives the plain engine's losses, norms and weights bit
 * for bit; with overflows injected (a gradient set to Infinity whenever the seed of backward
 * exceeds a threshold, as f16 storage overflows past 65504) the overflowed steps are redone at
 * half the scale and the run still ends on the same bits; at the minimum scale an overflow is
 * reported, and the Trainer stops as it does in fp32.
 */
import { LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { cpuTrainOps, type IntTensor, type Tensor } from "@loop/tensor";
import { tinyModelConfig } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { type DeviceTraining, deviceStepEngine } from "./device-step-engine.js";
import { DynamicLossScale } from "./loss-scale.js";
import { type LossScaledEngine, lossScaledStepEngine } from "./loss-scaled-engine.js";
import { freezeForStage, stageLoss } from "./objective.js";
import { resolveTrainOptions, type TrainOptions } from "./options.js";
import { NonFiniteError, Trainer, type TrainerState } from "./trainer.js";

describe("DynamicLossScale", () => {
  it("halves on overflow, doubles after `interval` clean steps, stays within [min, max]", () => {
    const s = new DynamicLossScale({ init: 8, interval: 3, min: 2, max: 16 });
    s.finite();
    s.finite();
    expect(s.scale).toBe(8);
    s.finite();
    expect(s.scale).toBe(16);
    for (let i = 0; i < 3; i++) s.finite();
    expect(s.scale).toBe(16); // at max
    expect(s.overflow()).toBe(true);
    expect(s.scale).toBe(8);
    // an overflow restarts the count of clean steps
    s.finite();
    s.finite();
    expect(s.overflow()).toBe(true);
    expect(s.scale).toBe(4);
    s.finite();
    s.finite();
    expect(s.scale).toBe(4);
    expect(s.overflow()).toBe(true);
    expect(s.scale).toBe(2);
    expect(s.overflow()).toBe(false); // at min: given up
    expect(s.scale).toBe(2);
    expect(s.overflows).toBe(3);
  });

  it("refuses scales that are not powers of two and an empty range", () => {
    expect(() => new DynamicLossScale({ init: 3 })).toThrow(/init must be a power of two, got 3/);
    expect(() => new DynamicLossScale({ init: 1, min: 2 })).toThrow(/min ≤ init ≤ max/);
    expect(() => new DynamicLossScale({ interval: 0 })).toThrow(/interval must be an integer/);
  });
});

const task = pHop({ alphabet: 3, length: 10, hops: 1 });
const config = parseConfig(tinyModelConfig(task.vocabSize));

/** The CPU model as a "device" copy of itself; `overflowAbove` makes backward overflow. */
function cpuTraining(model: LoopedModel, o: TrainOptions, overflowAbove = Infinity) {
  const seeds: number[] = [];
  const dev: DeviceTraining<Tensor, IntTensor> = {
    name: "cpu (loss-scaled engine)",
    ops: {
      ...cpuTrainOps,
      // the unscaling a mixed-precision backend does on its device
      scaleGrads: (params, factor) => {
        for (const p of params)
          if (p.grad) for (let i = 0; i < p.grad.length; i++) p.grad[i]! *= factor;
      },
      backward: (loss, weight) => {
        seeds.push(weight);
        cpuTrainOps.backward(loss, weight);
        // as f16 storage of a scaled gradient would: past the threshold, an infinity
        const g = model.parameters()[0]!.tensor.grad;
        if (weight > overflowAbove && g) g[0] = Number.POSITIVE_INFINITY;
      },
    },
    parameters: model.parameters(),
    stageLoss: (t, y, s) => stageLoss(model, t, y, o, s ? s.data : null),
    pullWeights: async () => {},
    pushWeights: () => {},
  };
  return { dev, seeds };
}

/** Five steps of one micro-batch, clipped (so the norm matters). */
const OPTS = resolveTrainOptions({
  steps: 5,
  batchSize: 4,
  lr: 1e-2,
  warmupSteps: 2,
  seed: 1,
  clip: 0.5,
});

async function run(scaled: { init: number; overflowAbove?: number; min?: number } | null) {
  const o = OPTS;
  const model = new LoopedModel(config, { seed: 3 });
  freezeForStage(model, o.stage);
  const { dev, seeds } = cpuTraining(model, o, scaled?.overflowAbove);
  const engine = scaled
    ? lossScaledStepEngine(dev, o, {
        init: scaled.init,
        interval: 2,
        min: scaled.min ?? 1,
      })
    : deviceStepEngine(dev, o);
  const t = new Trainer(model, task, o, engine);
  const steps = [];
  while (!t.done) steps.push(await t.nextStep());
  const weights = model.parameters().map((p) => Array.from(p.tensor.data));
  const scale = (engine as Partial<LossScaledEngine>).lossScale ?? null;
  return { losses: steps.map((s) => [s.loss, s.grad_norm]), weights, seeds, scale };
}

describe("lossScaledStepEngine on the CPU's TrainOps", () => {
  it("without overflow: the plain engine's losses, norms and weights bit for bit", async () => {
    const plain = await run(null);
    const scaled = await run({ init: 2 ** 10 });
    expect(scaled.losses).toEqual(plain.losses);
    expect(scaled.weights).toEqual(plain.weights);
    // backward was seeded with the scale (1 micro-batch: weight 1), doubled every 2 clean steps
    expect(scaled.seeds).toEqual([2 ** 10, 2 ** 10, 2 ** 11, 2 ** 11, 2 ** 12]);
  });

  it("skips an overflowed step's update, halves the scale, redoes the step: same bits", async () => {
    const plain = await run(null);
    const scaled = await run({ init: 2 ** 10, overflowAbove: 2 ** 8 });
    expect(scaled.losses).toEqual(plain.losses);
    expect(scaled.weights).toEqual(plain.weights);
    // step 1 overflows at 2^10 and 2^9 and runs at 2^8; after 2 clean steps the scale doubles,
    // overflows again (steps 3 and 5) and those steps are redone at 2^8
    expect(scaled.seeds).toEqual([1024, 512, 256, 256, 512, 256, 256, 512, 256]);
    expect(scaled.scale!.overflows).toBe(4);
  });

  it("a run resumed from a checkpoint's state goes on with its loss scale, as if uninterrupted", async () => {
    const whole = await run({ init: 2 ** 10 });
    const o = OPTS;
    const scaleOpts = { init: 2 ** 10, interval: 2, min: 1 };
    const start = (state: TrainerState | null, weights?: LoopedModel) => {
      const model = new LoopedModel(config, { seed: 3 });
      if (weights)
        model.parameters().forEach((p, i) => {
          p.tensor.data.set(weights.parameters()[i]!.tensor.data);
        });
      freezeForStage(model, o.stage);
      const { dev, seeds } = cpuTraining(model, o);
      const t = new Trainer(model, task, o, lossScaledStepEngine(dev, o, scaleOpts));
      if (state) t.setState(state);
      return { model, t, seeds };
    };
    const a = start(null);
    for (let i = 0; i < 3; i++) await a.t.nextStep();
    await a.t.sync();
    const state = a.t.getState();
    // 3 clean steps at interval 2: doubled once, one clean step toward the next doubling
    expect(state.lossScale).toEqual({ scale: 2 ** 11, good: 1 });
    const b = start(state, a.model);
    while (!b.t.done) await b.t.nextStep();
    expect([...a.seeds, ...b.seeds]).toEqual(whole.seeds);
    expect(b.model.parameters().map((p) => Array.from(p.tensor.data))).toEqual(whole.weights);
    // a fresh engine on the same state without its loss scale would restart from init
    expect(start({ ...state, lossScale: undefined }, a.model).t.getState().lossScale).toEqual({
      scale: 2 ** 10,
      good: 0,
    });
  });

  it("refuses a loss-scale state outside its bounds", () => {
    const s = new DynamicLossScale({ init: 8, interval: 3, min: 2, max: 16 });
    expect(() => s.restore({ scale: 32, good: 0 })).toThrow(/power of two in \[2, 16\]/);
    expect(() => s.restore({ scale: 6, good: 0 })).toThrow(/power of two/);
    expect(() => s.restore({ scale: 4, good: 3 })).toThrow(/integer in \[0, 3\)/);
    s.restore({ scale: 4, good: 2 });
    s.finite();
    expect(s.scale).toBe(8);
  });

  it("at the minimum scale an overflow is reported and the Trainer stops", async () => {
    await expect(run({ init: 4, min: 2, overflowAbove: 1 })).rejects.toThrow(NonFiniteError);
  });
});
