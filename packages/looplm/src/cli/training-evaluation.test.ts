/**
 * The evaluation during training makes its set's batches as it reads them, every time (the same
 * rows: the set is a pure function of its seed), so an --eval-count of any size holds one batch
 * instead of the whole set for the whole run.
 */
import { evalRecord, evaluateAccuracy } from "@loop/eval";
import { LoopedModel } from "@loop/looped";
import { type Batch, type EvalBatches, type EvalSetOptions, pHop, type Task } from "@loop/tasks";
import { describe, expect, it } from "vitest";
import { cpuBackendAsIs } from "../backend.js";
import { buildModelConfig, MODEL_DEFAULTS } from "./options/model.js";
import { taskEvaluator } from "./run-training.js";

const base = pHop({ alphabet: 3, length: 10, hops: 1 });

/** `base`, whose whole set cannot be built, counting the batches made and those held at once. */
function watched() {
  const seen = { made: 0, heldAtMost: 0 };
  let held = 0;
  const task: Task = Object.create(base, {
    evalSet: {
      value: () => {
        throw new Error("the whole evaluation set was built");
      },
    },
    evalBatches: {
      value: (o: EvalSetOptions): EvalBatches => {
        const set = base.evalBatches(o);
        return {
          rows: set.rows,
          batches: set.batches,
          *[Symbol.iterator]() {
            for (const b of set) {
              seen.made++;
              held++;
              seen.heldAtMost = Math.max(seen.heldAtMost, held);
              yield b as Batch;
              held--;
            }
          },
        };
      },
    },
  });
  return { task, seen };
}

describe("the evaluation during training", () => {
  it("makes its batches as it reads them, at each evaluation, with the whole set's numbers", async () => {
    const cfg = buildModelConfig(
      { ...MODEL_DEFAULTS, dModel: 16, dState: 4, headdim: 8, chunk: 8, loops: 2 },
      base.vocabSize,
    );
    const model = new LoopedModel(cfg, { seed: 3 });
    const kernels = cpuBackendAsIs().kernels;
    const { task, seen } = watched();
    const evaluate = taskEvaluator(task, 200, 64, kernels);
    const first = await evaluate(model);
    expect(seen).toEqual({ made: 4, heldAtMost: 1 });
    expect(await evaluate(model)).toEqual(first);
    expect(seen.made).toBe(8);
    // the numbers of the set built whole
    const whole = base.evalSet({ count: 200, batchSize: 64 });
    expect(first).toEqual(evalRecord(await evaluateAccuracy(model, whole, { kernels })));
  });
});
