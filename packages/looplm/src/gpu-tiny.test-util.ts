/** The tiny task and models the webgpu training tests share (small enough for SwiftShader). */
import { LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import type { StepEngine, TrainOptions } from "@loop/train";
import { runTraining } from "@loop/train/node";
import { TINY_MODEL } from "./check/backbones.js";

export const task = pHop({ alphabet: 3, length: 10, hops: 1 });

// (the backbones and the tiny model are `looplm check`'s: one table for both)
export { BACKBONES } from "./check/backbones.js";

/** d_model 16, one layer looped twice, unless `extra` says otherwise. */
export function tinyModel(extra: Record<string, unknown> = {}, seed = 3): LoopedModel {
  return new LoopedModel(
    parseConfig({
      vocab_size: task.vocabSize,
      ...TINY_MODEL,
      ...extra,
    }),
    { seed },
  );
}

/** Four steps with a checkpoint at step 2: the resume tests cut a run at step 3. */
export const CHECKPOINTED: Partial<TrainOptions> = {
  steps: 4,
  batchSize: 2,
  warmupSteps: 1,
  checkpointEvery: 2,
  evalEvery: 0,
  seed: 7,
};

/**
 * `runTraining` of `model` on `engine` (disposed after) into `runDir`: `crashAt` throws at that
 * step's report (a killed run), `resume` continues from the folder's checkpoint.
 */
export async function trainOnEngine(
  runDir: string,
  model: LoopedModel,
  engine: StepEngine & { dispose(): void },
  train: TrainOptions,
  extra: { resume?: boolean; crashAt?: number },
): Promise<void> {
  try {
    await runTraining({
      runDir,
      model,
      task,
      train,
      engine,
      resume: extra.resume,
      onStep: (m) => {
        if (m.step === extra.crashAt) throw new Error("simulated crash");
      },
    });
  } finally {
    engine.dispose();
  }
}
