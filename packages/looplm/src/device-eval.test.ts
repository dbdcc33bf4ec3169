/**
 * The evaluators fed by a device model (deviceOutputSource over @loop/looped's DeviceModel) on
 * the CPU's own ops give exactly the numbers of the CPU model evaluated directly: the generic path
 * that the device backends take (gpu-commands.test.ts) is the CPU's, bit for bit. (Generation
 * on devices: @loop/looped's device-decode.test.ts.)
 */
import { evaluateAccuracy, evaluatePerplexity } from "@loop/eval";
import { cpuBackendOps, toDevice } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { pHop } from "@loop/tasks";
import { goldenPath } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { deviceOutputSource } from "./device-eval.js";

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
