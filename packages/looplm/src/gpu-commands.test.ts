/**
 * The webgpu paths of `generate` and `eval` against their CPU twins on the same checkpoint:
 * generateOn (the decoders written once, the state on the GPU) gives generate's tokens under every
 * step policy (greedy and seeded sampling), and the evaluators fed by
 * the device (deviceOutputSource over the device model) give the CPU evaluators' numbers, exit-gate thresholds included.
 * Dawn + SwiftShader here; skipped with one printed line where no WebGPU adapter exists.
 */
import { evaluateAccuracy, evaluatePerplexity } from "@loop/eval";
import {
  type GenerateOptions,
  generate,
  generateOn,
  type LoopedModel,
  toDevice,
} from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { pHop } from "@loop/tasks";
import { goldenPath } from "@loop/test-support";
import { gpuForTests } from "@loop/test-support-gpu";
import { gpuBackendOps } from "@loop/webgpu";
import { describe, expect, it } from "vitest";
import { deviceOutputSource } from "./device-eval.js";

const ctx = await gpuForTests("webgpu generate and eval");
const SLOW = { timeout: 600_000 };

describe.runIf(ctx)("generate and eval on webgpu", () => {
  /** The tokens generateOn samples on the GPU. */
  async function onGpu(model: LoopedModel, prompt: number[], opts: GenerateOptions) {
    const out: number[] = [];
    for await (const t of generateOn(gpuBackendOps(ctx!), model, prompt, opts)) out.push(t);
    return out;
  }

  it("generateOn samples generate's tokens, with every step policy", SLOW, async () => {
    const model = loadCheckpoint(goldenPath("mamba-2x2-gate"));
    const prompt = [3, 1, 4, 1, 5];
    for (const opts of [
      { maxNewTokens: 4, temperature: 0 },
      { maxNewTokens: 4, temperature: 1, topK: 5, seed: 3 },
      { maxNewTokens: 4, temperature: 0, policy: { kind: "fixed" as const, step: 1 } },
      { maxNewTokens: 4, temperature: 0, policy: { kind: "threshold" as const, q: 0.5 } },
    ])
      expect(await onGpu(model, prompt, opts)).toEqual(generate(model, prompt, opts).tokens);
  });

  it("a hybrid model's KV caches on the GPU: generate's tokens", SLOW, async () => {
    const model = loadCheckpoint(goldenPath("hybrid-3x2"));
    const opts = { maxNewTokens: 6, temperature: 0 };
    expect(await onGpu(model, [2, 7, 1, 8], opts)).toEqual(
      generate(model, [2, 7, 1, 8], opts).tokens,
    );
  });

  it("the evaluators fed by the device give the CPU's numbers", SLOW, async () => {
    const model = loadCheckpoint(goldenPath("mamba-2x2-gate"));
    const task = pHop({ alphabet: 4, length: 8, hops: 1 });
    expect(task.vocabSize).toBeLessThanOrEqual(model.config.vocab_size);
    const batches = task.evalSet({ count: 6, batchSize: 3 });
    const gm = toDevice(model, gpuBackendOps(ctx!));
    try {
      const source = deviceOutputSource(gm);
      const qs = [0.3, 0.9];
      const acc = await evaluateAccuracy(source, batches, { qs });
      expect(acc).toEqual(await evaluateAccuracy(model, batches, { qs }));
      const ppl = await evaluatePerplexity(source, batches, { qs });
      const cpu = await evaluatePerplexity(model, batches, { qs });
      ppl.steps.forEach((s, r) => {
        expect(s.nll).toBeCloseTo(cpu.steps[r]!.nll, 4);
      });
      expect(ppl.gated.map((g) => g.histogram)).toEqual(cpu.gated.map((g) => g.histogram));
    } finally {
      gm.dispose();
    }
  });
});
