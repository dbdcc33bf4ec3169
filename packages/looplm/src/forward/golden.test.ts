/**
 * Every whole-model golden case (testdata/golden/<case>) through `looplm forward --backend <b>`
 * for each backend: the backend is started as the command's set-up starts it (startBackend), and
 * the command's action (runForward) takes the started backend, loads the checkpoint folder, parses inputs.json and
 * writes outputs.safetensors, and every tensor of that file must match the golden file within the
 * docs/formats.md tolerance (exit steps exactly). The native run is skipped with one printed line
 * where the native kernels cannot be built, and the webgpu run where no WebGPU adapter exists
 * (Dawn + SwiftShader here); both fail instead under CI.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeKernelNames } from "@loop/tensor/kernel";
import { cudaSuiteRuns, goldenModelCases, gpuSuiteRuns, nativeSuiteRuns } from "@loop/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type Backend, type ComputeBackend, startBackend } from "../backend.js";
import { expectGoldenOutputs } from "./forward-outputs.test-util.js";

const cases = goldenModelCases();

/** Whether `b` starts on this machine (then stopped again). */
async function starts(b: Backend): Promise<{ ok: true } | { ok: false; error: string }> {
  try {
    (await startBackend(b)).stop();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

const runs: Record<Backend, boolean> = {
  portable: true,
  native: nativeSuiteRuns(
    "golden cases on looplm forward --backend native",
    await starts("native"),
  ),
  webgpu: gpuSuiteRuns("golden cases on looplm forward --backend webgpu", await starts("webgpu")),
  cuda: cudaSuiteRuns("golden cases on looplm forward --backend cuda", await starts("cuda")),
};

async function checkCase(name: string, dir: string, backend: ComputeBackend): Promise<void> {
  await expectGoldenOutputs(name, join(dir, `${name}.safetensors`), backend);
}

for (const backend of BACKENDS)
  describe.runIf(runs[backend])(`looplm forward --backend ${backend}: golden cases`, () => {
    let dir: string;
    let started: ComputeBackend;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), `looplm-golden-${backend}-`));
      started = await startBackend(backend);
    });
    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
      started.stop();
    });
    it("runs on that backend's kernels", () => {
      expect(cases.length).toBeGreaterThanOrEqual(6);
      expect(started.name).toBe(backend);
      if (backend === "portable") expect(nativeKernelNames()).toEqual([]);
      if (backend === "native") expect(nativeKernelNames()).toContain("tensor/sgemm");
      expect(started.caps.memory).toBe(
        backend === "webgpu" || backend === "cuda" ? "device" : "host",
      );
    });
    for (const name of cases) it(name, () => checkCase(name, dir, started));
  });
