import { nativeSuiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { kernelSet } from "../native-registry.js";
import { matmul } from "../ops/matmul.js";
import { rmsnorm } from "../ops/rmsnorm.js";
import { Tensor } from "../tensor.js";
import { startKernelProfile, stopKernelProfile } from "./kernel-profile.js";
import { disableNativeTensorKernels, enableNativeTensorKernels } from "./native.js";

const built = await enableNativeTensorKernels();
afterAll(() => disableNativeTensorKernels());

const filled = (shape: number[]) => {
  const n = shape.reduce((a, b) => a * b, 1);
  return new Tensor(
    Float32Array.from({ length: n }, (_, i) => ((i * 7) % 11) / 11 - 0.5),
    shape,
  );
};

describe.runIf(nativeSuiteRuns("kernel profile", built))("kernel profile", () => {
  it("counts and times every native call while it runs, GEMMs by layout and shape", () => {
    const a = filled([24, 16]);
    const b = filled([16, 40]);
    const w = filled([16]);
    startKernelProfile();
    matmul(a, b);
    matmul(a, b);
    matmul(a, filled([40, 16]), { transB: true });
    rmsnorm(a, w);
    const entries = stopKernelProfile();
    const byKey = new Map(entries.map((e) => [e.kernel, e]));
    expect(byKey.get("tensor/sgemm NN 24×40×16")?.calls).toBe(2);
    expect(byKey.get("tensor/sgemm NT 24×40×16")?.calls).toBe(1);
    expect(byKey.get("tensor/rmsnormFwd")?.calls).toBe(1);
    for (const e of entries) expect(e.ms).toBeGreaterThanOrEqual(0);
    // most time first
    for (let i = 1; i < entries.length; i++)
      expect(entries[i - 1]!.ms).toBeGreaterThanOrEqual(entries[i]!.ms);
  });

  it("records nothing when stopped, and restarts from zero", () => {
    expect(stopKernelProfile()).toEqual([]);
    matmul(filled([8, 8]), filled([8, 8]));
    startKernelProfile();
    expect(stopKernelProfile()).toEqual([]);
    startKernelProfile();
    matmul(filled([8, 8]), filled([8, 8]));
    expect(stopKernelProfile().map((e) => [e.kernel, e.calls])).toEqual([
      ["tensor/sgemm NN 8×8×8", 1],
    ]);
    expect(kernelSet("tensor")).toBeDefined();
  });
});
