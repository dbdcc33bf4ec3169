/**
 * Every whole-model golden case through `runForward` (what `looplm forward --backend cuda` runs)
 * on the CUDA backend over its host emulator (@loop/cuda/node `startEmulatedDevice`: the same
 * CUDA C kernels, run on the CPU): the forward of every loop step, the exit gate and the
 * gradients must match the golden files within the docs/formats.md tolerance, as on every other
 * backend. Skipped with one printed line without a C++ compiler (a failure under CI).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmulatedDevice } from "@loop/cuda/node";
import { emulatorSuiteRuns, goldenModelCases } from "@loop/test-support";
import { afterAll, describe, it } from "vitest";
import { cudaComputeBackend } from "../backend.js";
import { expectGoldenOutputs } from "./forward-outputs.test-util.js";

const started = await startEmulatedDevice();
const runs = emulatorSuiteRuns("golden cases on the cuda backend's host emulator", started);

describe.runIf(runs)("runForward on cuda (host emulator): golden cases", () => {
  const dir = mkdtempSync(join(tmpdir(), "looplm-golden-cuda-emu-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of goldenModelCases())
    it(name, async () => {
      if (!started.ok) return;
      const backend = cudaComputeBackend(started.device);
      await expectGoldenOutputs(name, join(dir, `${name}.safetensors`), backend);
    }, 600_000);
});
