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
import { readSafetensorsFile } from "@loop/tensor/node";
import { emulatorSuiteRuns, goldenModelCases, goldenPath, loadGolden } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { cudaComputeBackend } from "../backend.js";
import { runForward } from "../cli/commands/forward.js";
import { outputFailures } from "./output-failures.test-util.js";

const started = await startEmulatedDevice();
const runs = emulatorSuiteRuns("golden cases on the cuda backend's host emulator", started);

describe.runIf(runs)("runForward on cuda (host emulator): golden cases", () => {
  const dir = mkdtempSync(join(tmpdir(), "looplm-golden-cuda-emu-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of goldenModelCases())
    it(name, async () => {
      if (!started.ok) return;
      const backend = cudaComputeBackend(started.device);
      const out = join(dir, `${name}.safetensors`);
      await runForward(
        { model: goldenPath(name), input: goldenPath(name, "inputs.json"), out },
        backend,
      );
      const got = readSafetensorsFile(out).tensors;
      expect(outputFailures(got, loadGolden(name, "outputs.safetensors"))).toEqual([]);
    }, 600_000);
});
