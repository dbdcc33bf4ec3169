/**
 * The training-step configurations of the speed benchmarks (model, busy) and the step itself:
 * the four of the first speed issue (T = 128–256, D = 64–256) and three shaped like the paper's
 * synthetic experiments (short sequences, small models).
 */
import { LoopedModel, type ModelConfigInput, makeConfig } from "@loop/looped";
import { mano, pHop, type Task } from "@loop/tasks";
import { AdamW, backward, IntTensor, Rng, releaseGrads, withScratch } from "@loop/tensor";
import { CHECK_SPEED_CONFIGS } from "looplm";

export interface BenchConfig {
  name: string;
  model: ModelConfigInput;
  batch: number;
  seq: number;
}

const ssm = (d_state: number, headdim: number) => ({
  d_state,
  headdim,
  expand: 2,
  n_groups: 1,
  d_conv: 4,
  chunk_size: 64,
});

/** A configuration with the vocabulary and sequence length of `task`. */
function taskShaped(
  name: string,
  task: Task,
  m: Omit<ModelConfigInput, "vocab_size"> & { batch: number },
): BenchConfig {
  const { batch, ...model } = m;
  return {
    name: `${name} (${task.name})`,
    model: { ...model, vocab_size: task.vocabSize },
    batch,
    seq: task.seqLen,
  };
}

export const CONFIGS: BenchConfig[] = [
  {
    name: "1: mamba D64 1⊗12",
    model: {
      backbone: "mamba",
      vocab_size: 32,
      d_model: 64,
      n_layers: 1,
      n_loops: 12,
      ssm: ssm(16, 16),
    },
    batch: 32,
    seq: 256,
  },
  // configurations 2–4: the models `looplm check` times on a GPU node (one definition for both)
  ...CHECK_SPEED_CONFIGS.map((c) => ({ ...c })),
  // the paper's synthetic experiments (docs/experiments.md): short sequences, small models, where
  // per-op costs (tape, N-API calls, thread hand-offs, small GEMMs) weigh; vocabulary and T are
  // the tasks' own
  taskShaped("5: p-hop 1⊗4 D64", pHop({ alphabet: 4, length: 32, hops: 4 }), {
    backbone: "mamba",
    d_model: 64,
    n_layers: 1,
    n_loops: 4,
    ssm: ssm(16, 16),
    batch: 64,
  }),
  taskShaped("6: Mano 4⊗6 D128", mano({ maxOps: 10 }), {
    backbone: "mamba",
    d_model: 128,
    n_layers: 4,
    n_loops: 6,
    ssm: ssm(32, 32),
    batch: 64,
  }),
  taskShaped("7: p-hop 1⊗12 D64", pHop({ alphabet: 4, length: 256, hops: 16 }), {
    backbone: "mamba",
    d_model: 64,
    n_layers: 1,
    n_loops: 12,
    ssm: ssm(16, 16),
    batch: 32,
  }),
];

/** One training step of `model` on fixed random tokens, as the trainer runs it. */
export function makeStep(c: BenchConfig): () => number {
  const cfg = makeConfig({ tie_embeddings: true, ...c.model });
  const model = new LoopedModel(cfg, { seed: 0 });
  const params = model.parameters();
  const opt = new AdamW(params, { lr: 1e-3 });
  const rng = new Rng(1);
  const n = c.batch * c.seq;
  const tokens = new IntTensor(new Int32Array(n), [c.batch, c.seq]);
  const targets = new IntTensor(new Int32Array(n), [c.batch, c.seq]);
  for (let i = 0; i < n; i++) {
    tokens.data[i] = rng.int(cfg.vocab_size);
    targets.data[i] = rng.int(cfg.vocab_size);
  }
  return () =>
    withScratch(() => {
      releaseGrads(params);
      const loss = model.finalLoss(tokens, targets);
      const v = loss.item();
      backward(loss);
      opt.step();
      return v;
    });
}

/**
 * Configurations to run: those listed in the environment variable `variable` (1-based indices
 * into CONFIGS, e.g. "1,3"), else the `fallback` indices.
 */
export function selectedConfigs(variable: string, fallback: readonly number[]): BenchConfig[] {
  const env = process.env[variable];
  const ids = env ? env.split(",").map((s) => Number(s)) : fallback;
  for (const i of ids) {
    if (!Number.isInteger(i) || i < 1 || i > CONFIGS.length)
      throw new Error(`${variable}: expected indices 1..${CONFIGS.length}, got ${env}`);
  }
  return ids.map((i) => CONFIGS[i - 1]!);
}
