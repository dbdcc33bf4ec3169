/**
 * The largest batch whose training step fits a GPU's memory, counted rather than guessed: one
 * step of the model at batch B × seq on the CUDA backend's recording device (which runs nothing
 * and counts every block the caching allocator takes; its peak of bytes in use is what the step
 * needs, since the allocator gives its cache back when the device is full). A batch fits when
 * that peak, plus HEADROOM for
 * the CUDA context and cuBLASLt's workspace, is within the device's memory.
 */
import { type CudaPrecision, cudaBackend, recordingDevice } from "@loop/cuda";
import { type Checkpointing, LoopedModel, type ModelConfigInput, parseConfig } from "@loop/looped";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";

/** The batches tried, largest first. */
export const BATCHES = [16, 8, 4, 2, 1] as const;
/** Bytes left for what the allocator does not count: the context, cuBLASLt's workspace, slack. */
export const HEADROOM = 3 * 2 ** 30;

/** The bytes one training step of `input` at `batch` × `seq` needs on the device. */
export async function stepBytes(
  input: ModelConfigInput,
  precision: CudaPrecision,
  batch: number,
  seq: number,
  model = new LoopedModel(parseConfig(input), { seed: 0 }),
  checkpointing: Checkpointing = false,
): Promise<number> {
  const dev = recordingDevice();
  const backend = cudaBackend(dev, { precision });
  const o = resolveTrainOptions({ batchSize: batch, checkpointing });
  const engine = deviceStepEngine(deviceTraining(model, backend.ops, o), o);
  try {
    const tokens = new Int32Array(batch * seq);
    await engine.step([{ tokens, targets: tokens, shape: [batch, seq] }], o.lr);
    return backend.ctx.allocator.counters().peakUsedBytes;
  } finally {
    engine.dispose();
    backend.release();
  }
}

/** The largest of `batches` that fits `memoryBytes`, with what it needs; or why none does. */
export async function fitBatch(
  input: ModelConfigInput,
  precision: CudaPrecision,
  memoryBytes: number,
  batches: readonly number[] = BATCHES,
  seq = 1024,
): Promise<{ batch: number; needBytes: number } | { batch: null; why: string }> {
  const model = new LoopedModel(parseConfig(input), { seed: 0 });
  let smallest = Number.NaN;
  for (const b of [...batches].sort((x, y) => y - x)) {
    const need = await stepBytes(input, precision, b, seq, model);
    if (need + HEADROOM <= memoryBytes) return { batch: b, needBytes: need };
    smallest = need;
  }
  return {
    batch: null,
    why: `even batch ${Math.min(...batches)} needs ${(smallest / 2 ** 30).toFixed(1)} GiB of the ${(memoryBytes / 2 ** 30).toFixed(1)}`,
  };
}
