/**
 * Gradient accumulation needs no memory per micro-batch: a step of 512 micro-batches holds what
 * a step of 4 holds. Measured deterministically: the CPU's pooled scratch memory (every buffer
 * of a step's activations comes from it) after one step, and the order in which a step makes
 * its micro-batches and runs them (each made only after the previous one's backward).
 */
import { LoopedModel, parseConfig } from "@loop/looped";
import { type Batch, pHop } from "@loop/tasks";
import { cpuTrainOps, releaseScratch, sum, Tensor } from "@loop/tensor";
import { scratchBytes } from "@loop/tensor/internal";
import { tinyModelConfig } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { deviceStepEngine, encodeStep } from "./device-step-engine.js";
import { stageLoss } from "./objective.js";
import { resolveTrainOptions } from "./options.js";
import { Trainer } from "./trainer.js";

const task = pHop({ alphabet: 3, length: 10, hops: 1 });

/** Bytes of pooled scratch memory one step with `gradAccum` micro-batches needed. */
function stepScratch(gradAccum: number, checkpointing = false): { bytes: number; loss: number } {
  const model = new LoopedModel(parseConfig(tinyModelConfig(task.vocabSize)), { seed: 3 });
  const t = new Trainer(
    model,
    task,
    resolveTrainOptions({ steps: 1, batchSize: 8, gradAccum, warmupSteps: 0, checkpointing }),
  );
  releaseScratch();
  const { loss } = t.trainStep();
  return { bytes: scratchBytes(), loss };
}

describe("gradient accumulation", () => {
  it("holds one micro-batch's activations at a time: the same memory for 4 and 512", () => {
    const four = stepScratch(4);
    const many = stepScratch(512);
    // activations of a micro-batch of 8 × 10 tokens do come from the pool ...
    expect(four.bytes).toBeGreaterThan(0);
    expect(Number.isFinite(many.loss)).toBe(true);
    // ... and go back to it after each micro-batch's backward
    expect(many.bytes).toBe(four.bytes);
    expect(stepScratch(4).bytes).toBe(four.bytes);
    // with activation checkpointing only kernels' own temporaries are pooled: flat too
    expect(stepScratch(64, true).bytes).toBe(stepScratch(4, true).bytes);
  });

  it("makes each micro-batch only once the previous one's backward has run", () => {
    const w = new Tensor(Float32Array.of(0.5), [1], true);
    const events: string[] = [];
    const batch = (i: number): Batch => {
      events.push(`make ${i}`);
      const tokens = Int32Array.of(1, 2);
      return { tokens, targets: tokens, shape: [1, 2] };
    };
    const ops = {
      ...cpuTrainOps,
      backward: (loss: Tensor, weight: number) => {
        events.push("backward");
        cpuTrainOps.backward(loss, weight);
      },
    };
    const { report } = encodeStep(
      {
        name: "test",
        ops,
        parameters: [{ name: "w", tensor: w, decay: false }],
        stageLoss: () => sum(w),
        pullWeights: async () => {},
        pushWeights: () => {},
        microBatchScope: (fn) => {
          events.push("scope");
          return fn();
        },
      },
      [{ name: "w", tensor: w, decay: false }],
      0,
      { count: 3, at: batch },
    );
    expect(events).toEqual([0, 1, 2].flatMap((i) => ["scope", `make ${i}`, "backward"]));
    // three micro-batches, each weighted 1/3: the gradient of Σw is 1
    expect(Array.from(w.grad!)).toEqual([1]);
    expect(Array.from(report.data.subarray(0, 3))).toEqual([0.5, 0.5, 0.5]);
  });

  it("a step engine (a device's) gets its micro-batches made on demand too", async () => {
    const made: number[] = [];
    // the task, its train batches counted as they are made
    const counting = Object.assign(Object.create(task) as typeof task, {
      trainBatch: (cursor: Parameters<typeof task.trainBatch>[0], n: number) => {
        made.push(cursor.position);
        return task.trainBatch(cursor, n);
      },
    });
    const run = async () => {
      const model = new LoopedModel(parseConfig(tinyModelConfig(task.vocabSize)), { seed: 3 });
      const o = resolveTrainOptions({ steps: 3, batchSize: 4, gradAccum: 5, warmupSteps: 0 });
      // the CPU model as a "device" copy of itself
      const engine = deviceStepEngine(
        {
          name: "cpu (device step engine)",
          ops: cpuTrainOps,
          parameters: model.parameters(),
          stageLoss: (t, y, sq) => stageLoss(model, t, y, o, sq ? sq.data : null),
          pullWeights: async () => {},
          pushWeights: () => {},
        },
        o,
      );
      const seen: string[] = [];
      const step = engine.step;
      engine.step = (b, lr) => {
        seen.push(Array.isArray(b) ? "array" : `lazy ${made.length}`);
        return step(b, lr);
      };
      const t = new Trainer(model, counting, o, engine);
      const losses: number[] = [];
      while (!t.done) losses.push((await t.nextStep()).loss);
      engine.dispose();
      return { seen, losses, cursor: t.cursor };
    };
    made.length = 0;
    const plain = await run();
    // each step's engine call comes before any of its micro-batches is made
    expect(plain.seen).toEqual(["lazy 0", "lazy 5", "lazy 10"]);
    expect(made).toHaveLength(15);
    // the same steps on the CPU Trainer: the same data, the same cursor after them
    const model = new LoopedModel(parseConfig(tinyModelConfig(task.vocabSize)), { seed: 3 });
    const o = resolveTrainOptions({ steps: 3, batchSize: 4, gradAccum: 5, warmupSteps: 0 });
    const cpu = new Trainer(model, task, o);
    const losses: number[] = [];
    while (!cpu.done) losses.push(cpu.trainStep().loss);
    expect(plain.losses).toEqual(losses);
    expect(plain.cursor).toEqual(cpu.cursor);
  });
});
