/**
 * The evaluators fed by a device model (deviceOutputSource over @loop/looped's DeviceModel) on
 * the CPU's own ops give exactly the numbers of the CPU model evaluated directly, and generation
 * on the device model gives the recurrent CPU decoding's tokens: the generic paths that the
 * webgpu backend takes (gpu-commands.test.ts) are the CPU's, bit for bit.
 */
import { evaluateAccuracy, evaluatePerplexity } from "@loop/eval";
import { cpuBackendOps, generate, toDevice } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { pHop } from "@loop/tasks";
import { goldenPath } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { deviceOutputSource } from "./device-eval.js";
import { generateOnDevice } from "./device-generate.js";

describe("deviceOutputSource on the CPU ops", () => {
  it("gives the CPU evaluators' numbers exactly, exit-gate thresholds included", async () => {
    const model = loadCheckpoint(goldenPath("mamba-2x2-gate"));
    const task = pHop({ alphabet: 4, length: 8, hops: 1 });
    const batches = task.evalSet({ count: 6, batchSize: 3 });
    const source = deviceOutputSource(toDevice(model, cpuBackendOps));
    const qs = [0.3, 0.9];
    expect(await evaluateAccuracy(source, batches, { qs })).toEqual(
      await evaluateAccuracy(model, batches, { qs }),
    );
    expect(await evaluatePerplexity(source, batches, { qs })).toEqual(
      await evaluatePerplexity(model, batches, { qs }),
    );
  });
});

describe("generateOnDevice on the CPU ops", () => {
  it("samples the recurrent decoding's tokens, greedy and seeded", async () => {
    const model = loadCheckpoint(goldenPath("hybrid-3x2"));
    const prompt = [3, 1, 4, 1, 5];
    for (const opts of [
      { maxNewTokens: 5, temperature: 0 },
      { maxNewTokens: 5, temperature: 1, topK: 5, seed: 3 },
    ])
      expect(await generateOnDevice(cpuBackendOps, model, prompt, opts)).toEqual(
        generate(model, prompt, opts).tokens,
      );
    await expect(
      generateOnDevice(cpuBackendOps, model, prompt, { maxNewTokens: 1, temperature: -1 }),
    ).rejects.toThrow(/temperature must be ≥ 0/);
  });
});
