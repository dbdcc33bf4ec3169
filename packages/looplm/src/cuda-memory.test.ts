/**
 * The CUDA backend's device memory for one training step, counted on the recording device (it
 * runs nothing and counts every block the caching allocator takes; the allocator's peak of
 * bytes in use is what the step needs, since it gives its cache back when the device is full).
 * Pinned for a small model of each
 * backbone: a change that makes a step hold more fails here (update PEAK with the new figures
 * and say why in docs/cuda.md, "Waits, faults and memory on the GPU"). The backward walk gives
 * each intermediate gradient back once its producer has run and each node's scratch once its
 * backward has run; activation checkpointing holds less still.
 */
import { cudaBackend, recordingDevice } from "@loop/cuda";
import { type Checkpointing, LoopedModel, type ModelConfigInput, parseConfig } from "@loop/looped";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";
import { describe, expect, it } from "vitest";

const BASE = {
  vocab_size: 256,
  d_model: 64,
  n_layers: 2,
  n_loops: 2,
  ssm: { d_state: 16, headdim: 16, chunk_size: 32 },
  attention: { n_heads: 4, n_kv_heads: 2 },
};
const MODELS: Record<string, ModelConfigInput> = {
  mamba: { ...BASE, backbone: "mamba" },
  hybrid: { ...BASE, backbone: "hybrid", attn_layers: [1] },
  transformer: { ...BASE, backbone: "transformer", mlp: { d_ff: 128 } },
};
const B = 4;
const T = 128;

/** The most bytes in use at once during one bf16 training step of `config`. */
async function peak(
  config: ModelConfigInput,
  checkpointing: Checkpointing = false,
): Promise<number> {
  const backend = cudaBackend(recordingDevice(), { precision: "bf16" });
  const o = resolveTrainOptions({ batchSize: B, checkpointing });
  const model = new LoopedModel(parseConfig(config), { seed: 0 });
  const engine = deviceStepEngine(deviceTraining(model, backend.ops, o), o);
  try {
    const tokens = new Int32Array(B * T).map((_, i) => (i * 7) % BASE.vocab_size);
    await engine.step([{ tokens, targets: tokens, shape: [B, T] }], o.lr);
    return backend.ctx.allocator.counters().peakUsedBytes;
  } finally {
    engine.dispose();
    backend.release();
  }
}

/** Each backbone's peak in bytes, as the recording device counts it now. */
const PEAK: Record<string, number> = {
  mamba: 15_199_232,
  hybrid: 12_306_432,
  transformer: 12_707_328,
};

describe("a training step's device memory", () => {
  for (const name of Object.keys(MODELS))
    it(`${name}: holds no more than its pinned peak, and less with checkpointing`, async () => {
      const bytes = await peak(MODELS[name]!);
      expect(bytes).toBeLessThanOrEqual(PEAK[name]!);
      expect(await peak(MODELS[name]!, true)).toBeLessThan(bytes);
    });

  it("a deep stack looped once holds less checkpointed per layer than per loop step", async () => {
    const deep = { ...MODELS.mamba!, n_layers: 6, n_loops: 1 } as ModelConfigInput;
    const step = await peak(deep, true);
    expect(step).toBeGreaterThanOrEqual(0.9 * (await peak(deep))); // one step: nothing saved
    expect(await peak(deep, "layer")).toBeLessThan(0.75 * step);
  });
});
