/**
 * Two backends side by side in one process: portable and webgpu are started once each and both
 * stay alive, and every golden case goes through `looplm forward`'s library function (runForward)
 * on each of them, passed as a value. The two outputs must agree within the docs/formats.md
 * tolerance (exit steps exactly). Each backend computes on its own CPU kernels (backend.ts):
 * portable's are the portable ones, and starting it second leaves the registry holding them too.
 * Skipped with one printed line where no WebGPU adapter exists (Dawn + SwiftShader here), a
 * failure under CI.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeKernelNames } from "@loop/tensor/kernel";
import { goldenModelCases, gpuSuiteRuns } from "@loop/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ComputeBackend, startBackend } from "../backend.js";
import { forwardOutputs, outputFailures } from "./forward-outputs.test-util.js";

let gpu: ComputeBackend | null = null;
let startError = "";
try {
  gpu = await startBackend("webgpu");
} catch (e) {
  startError = (e as Error).message;
}
const runs = gpuSuiteRuns(
  "portable and webgpu side by side",
  gpu ? { ok: true } : { ok: false, error: startError },
);

describe.runIf(runs)("portable and webgpu in one process: looplm forward agrees", () => {
  let dir: string;
  let portable: ComputeBackend;
  let webgpu: ComputeBackend;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "looplm-two-backends-"));
    webgpu = gpu!;
    portable = await startBackend("portable");
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    portable.stop();
    webgpu.stop();
  });

  /** The case's outputs on `b`, as `looplm forward` writes them. */
  async function outputs(name: string, b: ComputeBackend) {
    return forwardOutputs(name, join(dir, `${name}-${b.name}.safetensors`), b);
  }

  it("holds two live backends: one with a device, one on the portable kernels", () => {
    expect([portable.name, webgpu.name]).toEqual(["portable", "webgpu"]);
    expect(portable.caps.memory).toBe("host");
    expect(webgpu.caps.memory).toBe("device");
    expect(nativeKernelNames()).toEqual([]);
  });

  for (const name of goldenModelCases())
    it(name, async () => {
      const cpu = await outputs(name, portable);
      const dev = await outputs(name, webgpu);
      expect([...dev.keys()].sort()).toEqual([...cpu.keys()].sort());
      expect(outputFailures(dev, cpu)).toEqual([]);
    });
});
