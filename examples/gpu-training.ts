// Train on the GPU through WebGPU when this machine has an adapter, else on the CPU: the same
// Trainer, the same model; on the GPU every step (forward, backward, AdamW) runs on the device's
// own copy of the weights, and `sync()` brings them back into the CPU model for evaluation and
// checkpoints. In Node the GPU comes from Dawn, the optional `webgpu` package
// (npm install webgpu); a Linux machine without a GPU can use Google's SwiftShader driver
// (VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json, Debian's chromium package).
// Run: npx tsx gpu-training.ts
//
// Packages: @loop/eval, @loop/looped, @loop/tasks, @loop/train, @loop/webgpu (+ webgpu).
import { evaluateAccuracy } from "@loop/eval";
import { LoopedModel, parseConfig } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { deviceStepEngine, deviceTraining, resolveTrainOptions, Trainer } from "@loop/train";
import { gpuBackendOps } from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";

const task = pHop({ alphabet: 4, length: 16, hops: 2, dense: true });
const model = new LoopedModel(
  parseConfig({
    backbone: "mamba",
    vocab_size: task.vocabSize,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
  }),
  { seed: 5 },
);
// A few steps: SwiftShader (a GPU emulated on the CPU) takes seconds per step; a real GPU does not.
const opts = resolveTrainOptions({ steps: 4, batchSize: 8, warmupSteps: 1 });

// No adapter (or no `webgpu` package): one sentence saying why, and the CPU trains instead.
const gpu = await createNodeGpuContext().catch((e: Error) => {
  console.error(`no GPU, training on the CPU: ${e.message}`);
  return null;
});
if (gpu) console.error(`training on the GPU: ${gpu.adapterName}`);
const engine = gpu ? deviceStepEngine(deviceTraining(model, gpuBackendOps(gpu), opts), opts) : null;
const trainer = new Trainer(model, task, opts, engine);
try {
  while (!trainer.done) {
    const { step, loss } = await trainer.nextStep();
    // Two decimals: the GPU and the CPU agree to float32 rounding, not bit for bit.
    console.log(`step ${step}: loss ${loss.toFixed(2)}`);
  }
  await trainer.sync(); // the device's weights back into `model`
} finally {
  engine?.dispose();
  gpu?.destroy();
}
const { steps } = await evaluateAccuracy(model, task.evalSet({ count: 128, batchSize: 64 }));
console.log(
  `accuracy after the last loop step: ${(100 * steps[steps.length - 1]!.accuracy).toFixed(0)} %`,
);
