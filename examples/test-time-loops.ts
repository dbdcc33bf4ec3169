// More loops at test time than at training: the looped block's weights do not depend on R, so
// a model trained as 1⊗2 loads into a 1⊗4 model of the same config and runs two extra loop
// steps. Accuracy at every loop step shows whether the extra steps help (they need not: the
// block never learnt to be applied more than twice). Run: npx tsx test-time-loops.ts
//
// Packages: @loop/eval, @loop/looped, @loop/tasks, @loop/train.
import { evaluateAccuracy } from "@loop/eval";
import { LoopedModel, loadStateDict, parseConfig, stateDict } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { resolveTrainOptions, Trainer } from "@loop/train";

const task = pHop({ alphabet: 4, length: 16, hops: 2, dense: true });
const config = { backbone: "mamba", vocab_size: task.vocabSize, d_model: 16, n_layers: 1 } as const;

const trained = new LoopedModel(parseConfig({ ...config, n_loops: 2 }), { seed: 3 });
const trainer = new Trainer(
  trained,
  task,
  resolveTrainOptions({ steps: 40, batchSize: 16, warmupSteps: 4 }),
);
while (!trainer.done) trainer.trainStep();

// The same weights (every name and shape agrees; loadStateDict is strict), applied 4 times.
const deeper = new LoopedModel(parseConfig({ ...config, n_loops: 4 }));
loadStateDict(deeper, stateDict(trained));

const evalSet = task.evalSet({ count: 128, batchSize: 64 });
for (const [name, model] of [
  ["trained 1⊗2", trained],
  ["run as 1⊗4", deeper],
] as const) {
  const { steps } = await evaluateAccuracy(model, evalSet);
  console.log(`${name}: ${steps.map((s) => `${(100 * s.accuracy).toFixed(1)} %`).join(" → ")}`);
}
