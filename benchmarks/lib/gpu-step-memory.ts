/**
 * The device memory of one webgpu training step (`GpuContext.memory()`, peak bytes held at once
 * during the step, in the pool's size classes): activations kept to the end of the micro-batch,
 * freed as the backward consumes them (the default), and with activation checkpointing.
 */
import { LoopedModel } from "@loop/looped";
import { Rng } from "@loop/tensor";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";
import { type GpuContext, gpuBackendOps } from "@loop/webgpu";
import { type MemoryConfig, memoryModelConfig } from "./memory-config.js";

export const STEP_MODES = [
  { mode: "kept", release: false, checkpointing: false },
  { mode: "freed", release: true, checkpointing: false },
  { mode: "checkpointed", release: true, checkpointing: true },
] as const;

/** Peak bytes of the second (steady) step of `c` in `mode`, and its loss. */
export async function gpuStepPeak(
  ctx: GpuContext,
  c: MemoryConfig,
  mode: (typeof STEP_MODES)[number],
): Promise<{ peakBytes: number; loss: number }> {
  const o = resolveTrainOptions({ lr: 1e-3, checkpointing: mode.checkpointing });
  const model = new LoopedModel(memoryModelConfig(c), { seed: 1 });
  const ops = gpuBackendOps(ctx, { releaseInBackward: mode.release });
  const engine = deviceStepEngine(deviceTraining(model, ops, o), o);
  const rng = new Rng(2);
  const tokens = Int32Array.from({ length: c.B * c.T }, () => rng.int(c.V));
  const batch = { tokens, targets: tokens, shape: [c.B, c.T] as [number, number] };
  try {
    let out = { peakBytes: 0, loss: Number.NaN };
    for (let s = 0; s < 2; s++) {
      ctx.resetPeak();
      const r = await engine.step([batch], o.lr);
      out = { peakBytes: ctx.memory().peakBytes, loss: r.loss };
    }
    return out;
  } finally {
    engine.dispose();
    ctx.trimPool();
  }
}
