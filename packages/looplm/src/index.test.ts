import { describe, expect, it } from "vitest";
import * as looplm from "./index.js";

describe("umbrella exports", () => {
  it("re-exports every package and the main entry points", () => {
    for (const ns of [
      "attention",
      "evaluation",
      "exitGate",
      "looped",
      "ssm",
      "tasks",
      "tensor",
      "train",
    ] as const) {
      // biome-ignore lint/performance/noDynamicNamespaceImportAccess: the test walks the namespaces on purpose; tree shaking does not apply to a test
      expect(Object.keys(looplm[ns]).length).toBeGreaterThan(3);
    }
    expect(looplm.LoopedModel).toBe(looplm.looped.LoopedModel);
    expect(typeof looplm.buildProgram).toBe("function");
    expect(looplm.ssm.Mamba2Mixer).toBeDefined();
    expect(looplm.attention.AttentionMixer).toBeDefined();
  });
});
