// Your own training loop: the model, the loss and the optimiser from the packages, every step
// written out (what @loop/train's Trainer does for you, minus resume, logs and gradient
// accumulation). Run: npx tsx training-loop.ts
//
// Packages: @loop/looped, @loop/tasks, @loop/tensor (npm install them with their closure; see
// the README's "Installing the packages").
import { LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { AdamW, backward, clipGradNorm, intTensor, warmupCosine } from "@loop/tensor";

// p-hop induction (docs/tasks.md): follow 2 hops back through a 16-symbol sequence over a
// 4-letter alphabet; `dense` makes every prefix's answer a target, a denser training signal.
const task = pHop({ alphabet: 4, length: 16, hops: 2, dense: true });

// One Mamba-2 layer applied twice: the 1⊗2 looped model (docs/model.md).
const model = new LoopedModel(
  parseConfig({
    backbone: "mamba",
    vocab_size: task.vocabSize,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
  }),
  { seed: 1 },
);

const steps = 60;
const params = model.parameters(); // each with its docs/model.md §6 name and weight-decay flag
const optimiser = new AdamW(params, { lr: 3e-3, weightDecay: 0.01 });
const lr = warmupCosine({ peakLr: 3e-3, warmupSteps: 6, totalSteps: steps, minLr: 3e-4 });

// The training stream is a pure function of (seed, position): the cursor says where it stands.
let cursor = task.startCursor(7);
for (let step = 0; step < steps; step++) {
  const next = task.trainBatch(cursor, 16);
  cursor = next.cursor;
  const { tokens, targets, shape } = next.batch;
  optimiser.zeroGrad();
  // Mean cross-entropy of the last loop step's logits over the scored positions (targets ≠ −100).
  const loss = model.finalLoss(intTensor(tokens, shape), intTensor(targets, shape));
  backward(loss);
  const gradNorm = clipGradNorm(params, 1.0); // the norm before clipping
  optimiser.step(lr(step));
  if (step % 20 === 0 || step === steps - 1)
    console.log(`step ${step}: loss ${loss.data[0]!.toFixed(3)}, grad norm ${gradNorm.toFixed(3)}`);
}
