/**
 * The losses of a few training steps of a model on any backend's ops (@loop/train's
 * deviceStepEngine, the engine `looplm train` runs on a device), from the same weights and the
 * same batches: a learnable stream (each token the previous one plus 1 mod V, with noise).
 * The CUDA training tests compare backends with it.
 */
import { LoopedModel, type ModelConfigInput, parseConfig } from "@loop/looped";
import { type BackendOps, Rng } from "@loop/tensor";
import {
  deviceStepEngine,
  deviceTraining,
  resolveTrainOptions,
  type TrainOptions,
} from "@loop/train";

/** Per-step losses of `steps` steps of `config` on `ops` at batch × seq. */
export async function trainLosses<T, I>(
  ops: BackendOps<T, I>,
  config: ModelConfigInput,
  steps: number,
  batch: number,
  seq: number,
  extra: Partial<TrainOptions> = {},
): Promise<number[]> {
  const cfg = parseConfig(config);
  const V = cfg.vocab_size;
  const o = resolveTrainOptions({ lr: 3e-3, warmupSteps: 0, clip: 0.5, ...extra });
  const engine = deviceStepEngine(deviceTraining(new LoopedModel(cfg, { seed: 0 }), ops, o), o);
  const rng = new Rng(1);
  const out: number[] = [];
  try {
    for (let s = 0; s < steps; s++) {
      const tokens = new Int32Array(batch * seq);
      for (let k = 0; k < tokens.length; k++)
        tokens[k] = k % seq === 0 || rng.uniform() < 0.1 ? rng.int(V) : (tokens[k - 1]! + 1) % V;
      const targets = tokens.map((_t, k) => (k % seq === seq - 1 ? -100 : tokens[k + 1]!));
      out.push((await engine.step([{ tokens, targets, shape: [batch, seq] }], o.lr)).loss);
    }
  } finally {
    engine.dispose();
  }
  return out;
}
