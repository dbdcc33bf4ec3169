/** `--gpu-features` to Dawn's toggles, and what a toggle unlocks on Dawn + SwiftShader. */
import { gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { createNodeGpuContext, dawnFlags, parseGpuFeatures } from "./index.js";

const ctx = await gpuForTests("Dawn toggles on the adapter");

describe("GPU features", () => {
  it("maps each feature to its Dawn toggles, once each", () => {
    expect(dawnFlags([])).toEqual([]);
    expect(dawnFlags(["subgroups"])).toEqual([]);
    expect(dawnFlags(["f16", "subgroup-matrix"])).toEqual([
      "enable-dawn-features=vulkan_enable_f16_on_nvidia,allow_unsafe_apis,use_vulkan_memory_model",
    ]);
    expect(parseGpuFeatures("f16, subgroups,f16")).toEqual(["f16", "subgroups"]);
    expect(() => parseGpuFeatures("f16,tensor-cores")).toThrow(
      '--gpu-features: unknown feature "tensor-cores" (choose from f16, subgroups, subgroup-matrix)',
    );
  });

  it.runIf(ctx)(
    "allow_unsafe_apis (subgroup-matrix) shows the adapter's experimental features",
    async () => {
      const plain = ctx!.adapter.features;
      const unlocked = await createNodeGpuContext({ features: ["subgroup-matrix"] });
      try {
        expect(plain).toContain("subgroups");
        expect(plain.some((f) => f.startsWith("chromium-experimental-"))).toBe(false);
        expect(unlocked.adapter.features.some((f) => f.startsWith("chromium-experimental-"))).toBe(
          true,
        );
      } finally {
        unlocked.destroy();
      }
    },
  );
});
