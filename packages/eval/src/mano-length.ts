/*
 * Mano accuracy per expression length: a model scored at every ℓ = 1..L on `count` fresh
 * expressions per ℓ, accuracy at every loop step (docs/tasks.md "Mano").
 *
 * The expressions come from their own stream, "mano/eval-len": expression i of length ℓ is drawn
 * from `Rng(deriveSeed(seed, "mano/eval-len", ℓ·10⁶ + i))`, a label neither the training stream
 * ("mano/train") nor the fixed evaluation set ("mano/eval") uses, so no training row is scored.
 * The default seed is the task's fixed evaluation seed (0x6d616e6f); with it and batches of 64
 * this is the instrument that measured the pilots (docs/results/pilots.md), number for number.
 */
import { type Batch, MANO_DEFAULT_EVAL_SEED, type ManoExample, type ManoTask } from "@loop/tasks";
import { deriveSeed, Rng } from "@loop/tensor";
import { evaluateAccuracy, type StepScore } from "./accuracy.js";
import type { Evaluated, OnKernels } from "./eval-model.js";

/** The stream label of the per-length expressions. */
export const MANO_LENGTH_STREAM = "mano/eval-len";
/** Expressions per ℓ are indexed below this (ℓ·STRIDE + i keeps the lengths' streams apart). */
const STRIDE = 1_000_000;

/** Options of `evaluateManoByLength`: expressions per length, seed, batch size, CPU kernels. */
export interface LengthAccuracyOptions extends OnKernels {
  /** Expressions scored at each ℓ (1 ≤ count ≤ 1,000,000). */
  count: number;
  /** Seed of the stream (default: the task's fixed evaluation seed, 0x6d616e6f). */
  seed?: number;
  /** Expressions per forward pass (default 64; the accuracy does not depend on it). */
  batchSize?: number;
}

/** Accuracy at every loop step for Mano expressions of one length ℓ. */
export interface LengthScore {
  /** ℓ, the number of operators. */
  ops: number;
  /** One entry per loop step r = 1..R (accuracy at the `<ans>` position). */
  steps: StepScore[];
}

/** What `evaluateManoByLength` returns: per-step accuracy for every expression length ℓ = 1..L. */
export interface LengthAccuracy {
  seed: number;
  /** Expressions per ℓ. */
  count: number;
  /** One entry per ℓ = 1..L, in order. */
  lengths: LengthScore[];
}

function positiveInt(name: string, v: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(v) || v < 1 || v > max)
    throw new Error(`${name} must be an integer in [1, ${max}], got ${v}`);
  return v;
}

/** Expression `index` of length `ops` of the per-length stream `seed`. */
function manoLengthExample(task: ManoTask, seed: number, ops: number, index: number): ManoExample {
  return task.sample(new Rng(deriveSeed(seed, MANO_LENGTH_STREAM, ops * STRIDE + index)), ops);
}

/** The first `count` expressions of length `ops` of the stream, as batches. */
export function manoLengthBatches(
  task: ManoTask,
  ops: number,
  opts: LengthAccuracyOptions,
): Batch[] {
  const count = positiveInt("count", opts.count, STRIDE);
  const bs = positiveInt("batchSize", opts.batchSize ?? 64);
  const seed = opts.seed ?? MANO_DEFAULT_EVAL_SEED;
  if (!Number.isInteger(ops) || ops < 1 || ops > task.maxOps)
    throw new Error(`ops must be an integer in [1, ${task.maxOps}], got ${ops}`);
  const out: Batch[] = [];
  for (let start = 0; start < count; start += bs) {
    const ex: ManoExample[] = [];
    for (let i = start; i < Math.min(count, start + bs); i++)
      ex.push(manoLengthExample(task, seed, ops, i));
    out.push(task.toBatch(ex));
  }
  return out;
}

/** Accuracy of `model` (or a source of its outputs) at every ℓ = 1..L and loop step. */
export async function evaluateManoByLength(
  model: Evaluated,
  task: ManoTask,
  opts: LengthAccuracyOptions,
): Promise<LengthAccuracy> {
  const lengths: LengthScore[] = [];
  for (let ops = 1; ops <= task.maxOps; ops++) {
    const r = await evaluateAccuracy(model, manoLengthBatches(task, ops, opts), {
      score: (b, p) => task.score(b, p),
      kernels: opts.kernels,
    });
    lengths.push({ ops, steps: r.steps });
  }
  return { seed: opts.seed ?? MANO_DEFAULT_EVAL_SEED, count: opts.count, lengths };
}
