// Read the hidden state h(r) after every loop step and compute your own per-step metric.
// `runLoop` is the one loop over R that the training forward, decoding and prefill all run on:
// give it h(0) and hooks, and `after(h, r)` sees h(r) (after the step's end-of-step norm when
// the config has loop_norm). Here: how far each step moves h, and accuracy per loop step.
// Run: npx tsx loop-steps.ts
//
// Packages: @loop/looped, @loop/tasks, @loop/train, @loop/tensor.
import { LoopedModel, parseConfig, runLoop } from "@loop/looped";
import { argmaxLogits, pHop } from "@loop/tasks";
import { embedding, intTensor, noGrad, sub, type Tensor } from "@loop/tensor";
import { resolveTrainOptions, Trainer } from "@loop/train";

const task = pHop({ alphabet: 4, length: 16, hops: 2, dense: true });
const model = new LoopedModel(
  parseConfig({
    backbone: "mamba",
    vocab_size: task.vocabSize,
    d_model: 16,
    n_layers: 1,
    n_loops: 3,
  }),
  { seed: 2 },
);
const trainer = new Trainer(
  model,
  task,
  resolveTrainOptions({ steps: 40, batchSize: 16, warmupSteps: 4 }),
);
while (!trainer.done) trainer.trainStep();

/** Root mean square of a tensor's entries. */
const rms = (t: Tensor) => Math.sqrt(t.data.reduce((s, x) => s + x * x, 0) / t.data.length);

const batch = task.evalSet({ count: 64, batchSize: 64 })[0]!;
noGrad(() => {
  let previous = embedding(intTensor(batch.tokens, batch.shape), model.embeddings); // h(0)
  runLoop(model, previous, {
    layer: (layer, h) => layer.forward(h),
    after(h, r) {
      // r counts from 0: h is h(r+1), [B, T, d_model]. Readout + LM head give that step's logits.
      const moved = rms(sub(h, previous)) / rms(previous);
      const predicted = argmaxLogits(model.head(model.readout(h)).data, task.vocabSize);
      const { accuracy } = task.score(batch, predicted);
      console.log(
        `loop step ${r + 1}: |h(r) - h(r-1)| / |h(r-1)| = ${moved.toFixed(3)}, accuracy ${(100 * accuracy).toFixed(1)} %`,
      );
      previous = h;
      return h; // what the next step starts from
    },
  });
});
