/*
 * The Mano task (docs/tasks.md "Mano"). Sequence fed to the model:
 * `<bos> <len_ℓ> expression… <ans>`; the target at the `<ans>` position is the answer.
 * Training rows draw ℓ uniform in 1..L and are right-padded with `<pad>` to T = 2L + 4 (the
 * length at ℓ = L), so the answer position is 2ℓ + 3 and a causal model never sees padding
 * before it. Evaluation uses ℓ = L only (no padding).
 *
 * Row i of the training stream for seed s is a pure function of (L, s, i): it is drawn from
 * `Rng(deriveSeed(s, "mano/train", i))`, so batches and resumption do not depend on batch size.
 */

import { deriveSeed, Rng } from "@loop/tensor";
import { allocBatch, evalRows, positiveInt, StreamTask, trainRows } from "../batch.js";
import type { Batch, EvalBatches, EvalSetOptions, Task, TaskCursor } from "../task.js";
import { Vocabulary } from "../vocabulary.js";
import { MANO_MODULUS, MANO_OPERATORS, sampleExpression } from "./expression.js";

/** Mano's size: L, the largest number of operators. */
export interface ManoConfig {
  /** L: the largest number of operators (training ℓ ∈ 1..L, evaluation ℓ = L). */
  maxOps: number;
}

/** One Mano example as symbols: ℓ, the input sequence and the answer. */
export interface ManoExample {
  /** ℓ, the number of operators. */
  ops: number;
  /** `<bos> <len_ℓ> expression… <ans>` as symbols. */
  input: string[];
  /** The value mod 23, as a symbol "0"…"22". */
  answer: string;
}

/** The default seed of Mano's evaluation set. */
export const MANO_DEFAULT_EVAL_SEED = 0x6d616e6f; // "mano"

/** Mano symbols in id order: "0"…"22", "+", "-", "*", "<bos>", "<len_0>"…"<len_L>", "<ans>", "<pad>". */
function manoSymbols(maxOps: number): string[] {
  const s: string[] = [];
  for (let v = 0; v < MANO_MODULUS; v++) s.push(String(v));
  s.push(...MANO_OPERATORS, "<bos>");
  for (let l = 0; l <= maxOps; l++) s.push(`<len_${l}>`);
  s.push("<ans>", "<pad>");
  return s;
}

/**
 * Mano (docs/tasks.md) as a `Task`: prefix arithmetic mod 23, trained on ℓ ∈ 1..L operators and
 * scored at the answer position.
 */
export class ManoTask extends StreamTask implements Task {
  /** The task's name, e.g. `mano-L10`. */
  readonly name: string;
  /** Mano is scored by exact-match accuracy at the answer position. */
  readonly metric = "accuracy";
  /** A symbolic task: no tokenizer. */
  readonly tokenizer = null;
  /** L: the largest number of operators. */
  readonly maxOps: number;
  /** Mano's symbols (docs/tasks.md). */
  readonly vocab: Vocabulary;
  /** T = 2L + 4, the longest example's length. */
  readonly seqLen: number;
  /** The id shorter examples are padded with. */
  readonly padId: number;

  constructor(config: ManoConfig) {
    super();
    this.maxOps = positiveInt("maxOps", config.maxOps);
    this.name = `mano-L${this.maxOps}`;
    this.vocab = new Vocabulary(manoSymbols(this.maxOps));
    this.seqLen = 2 * this.maxOps + 4;
    this.padId = this.vocab.id("<pad>");
  }

  /** The number of symbols. */
  get vocabSize(): number {
    return this.vocab.size;
  }

  /** A fresh example with `ops` operators (0..L) drawn from `rng`. */
  sample(rng: Rng, ops: number): ManoExample {
    if (!Number.isInteger(ops) || ops < 0 || ops > this.maxOps)
      throw new Error(`ops must be an integer in [0, ${this.maxOps}], got ${ops}`);
    const input = ["<bos>", `<len_${ops}>`];
    const value = sampleExpression(rng, ops, input);
    input.push("<ans>");
    return { ops, input, answer: String(value) };
  }

  /** Training example `index` of the stream `seed` (ℓ uniform in 1..L). */
  trainExample(seed: number, index: number): ManoExample {
    const rng = new Rng(deriveSeed(seed, "mano/train", index));
    return this.sample(rng, rng.intIn(1, this.maxOps));
  }

  /** Evaluation example `index` of the eval set `seed` (ℓ = L). */
  evalExample(seed: number, index: number): ManoExample {
    return this.sample(new Rng(deriveSeed(seed, "mano/eval", index)), this.maxOps);
  }

  /** Write examples into a batch (right-padded; target at the `<ans>` position). */
  toBatch(examples: readonly ManoExample[]): Batch {
    const T = this.seqLen;
    const batch = allocBatch(examples.length, T, this.padId);
    examples.forEach((ex, b) => {
      const ids = this.vocab.encode(ex.input);
      batch.tokens.set(ids, b * T);
      batch.targets[b * T + ids.length - 1] = this.vocab.id(ex.answer);
    });
    return batch;
  }

  /**
   * The next `batchSize` training examples after `cursor` (ℓ drawn from 1..L) and the cursor after
   * them.
   */
  trainBatch(cursor: TaskCursor, batchSize: number): { batch: Batch; cursor: TaskCursor } {
    return trainRows(cursor, batchSize, (start, n) =>
      this.toBatch(Array.from({ length: n }, (_, b) => this.trainExample(cursor.seed, start + b))),
    );
  }

  /** The fixed evaluation set at ℓ = L, in batches. */
  evalSet(options: EvalSetOptions): Batch[] {
    return [...this.evalBatches(options)];
  }

  evalBatches(options: EvalSetOptions): EvalBatches {
    const count = positiveInt("count", options.count);
    const seed = options.seed ?? MANO_DEFAULT_EVAL_SEED;
    return evalRows(count, options.batchSize, (start, n) =>
      this.toBatch(Array.from({ length: n }, (_, b) => this.evalExample(seed, start + b))),
    );
  }
}

/** The Mano task with L = `maxOps`. */
export function mano(config: ManoConfig): ManoTask {
  return new ManoTask(config);
}
