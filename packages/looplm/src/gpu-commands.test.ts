/**
 * The webgpu paths of `generate` and `eval` against their CPU twins on the same checkpoint:
 * generateOnDevice gives generate's tokens (greedy and seeded sampling), and the evaluators fed by
 * the device (deviceOutputSource over the device model) give the CPU evaluators' numbers, exit-gate thresholds included.
 * Dawn + SwiftShader here; skipped with one printed line where no WebGPU adapter exists.
 */
import { evaluateAccuracy, evaluatePerplexity } from "@loop/eval";
import { generate, toDevice } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { pHop } from "@loop/tasks";
import { goldenPath } from "@loop/test-support";
import { gpuForTests } from "@loop/test-support-gpu";
import { gpuModelOps } from "@loop/webgpu";
import { describe, expect, it } from "vitest";
import { deviceOutputSource } from "./device-eval.js";
import { generateOnDevice } from "./device-generate.js";

const ctx = await gpuForTests("webgpu generate and eval");
const SLOW = { timeout: 600_000 };

describe.runIf(ctx)("generate and eval on webgpu", () => {
  it("generateOnDevice samples generate's tokens", SLOW, async () => {
    const model = loadCheckpoint(goldenPath("mamba-2x2-gate"));
    const prompt = [3, 1, 4, 1, 5];
    for (const opts of [
      { maxNewTokens: 4, temperature: 0 },
      { maxNewTokens: 4, temperature: 1, topK: 5, seed: 3 },
    ]) {
      const want = generate(model, prompt, opts).tokens;
      expect(await generateOnDevice(gpuModelOps(ctx!), model, prompt, opts)).toEqual(want);
    }
    await expect(
      generateOnDevice(gpuModelOps(ctx!), model, prompt, {
        maxNewTokens: 1,
        policy: { kind: "fixed", step: 1 },
      }),
    ).rejects.toThrow(/policy "fixed" needs a backend whose decoding offers it/);
  });

  it("the evaluators fed by the device give the CPU's numbers", SLOW, async () => {
    const model = loadCheckpoint(goldenPath("mamba-2x2-gate"));
    const task = pHop({ alphabet: 4, length: 8, hops: 1 });
    expect(task.vocabSize).toBeLessThanOrEqual(model.config.vocab_size);
    const batches = task.evalSet({ count: 6, batchSize: 3 });
    const gm = toDevice(model, gpuModelOps(ctx!));
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
