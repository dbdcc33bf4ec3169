import { describe, expect, it } from "vitest";
import { checkTrainingMemory, formatBytes, trainingMemoryNeed } from "./memory-need.js";
import { buildModelConfig, MODEL_DEFAULTS } from "./options/model.js";

const cfg = buildModelConfig(
  { ...MODEL_DEFAULTS, dModel: 16, dState: 4, headdim: 8, chunk: 8 },
  10,
);

describe("the memory a training setting needs", () => {
  it("counts 16 bytes a parameter and a floor for one step's activations", () => {
    const need = trainingMemoryNeed(cfg, { batchSize: 4 }, 12);
    expect(need.weightBytes).toBe(16 * need.params);
    // logits and their gradient (2·V) and every layer's output at every loop step, float32
    const perToken = 2 * 10 + cfg.n_layers * cfg.n_loops * cfg.d_model;
    expect(need.stepBytes).toBe(4 * 4 * 12 * perToken);
  });
  it("refuses a setting over the machine's memory, naming the amount and the flag", () => {
    const need = trainingMemoryNeed(cfg, { batchSize: 1000 }, 12);
    const total = need.weightBytes + need.stepBytes;
    expect(() => checkTrainingMemory(cfg, { batchSize: 1000 }, 12, total)).not.toThrow();
    expect(() => checkTrainingMemory(cfg, { batchSize: 1000 }, 12, total - 1)).toThrow(
      `training this setting needs at least ${formatBytes(total)} of memory`,
    );
    expect(() => checkTrainingMemory(cfg, { batchSize: 1000 }, 12, 1024)).toThrow(
      /: lower --batch \(this machine has 1\.0 KiB\)$/,
    );
  });
  it("writes sizes in binary units", () => {
    expect(formatBytes(512)).toBe("512 bytes");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(3 * 1024 ** 4)).toBe("3.0 TiB");
  });
});
