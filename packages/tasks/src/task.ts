/*
 * The interface every task (Mano, p-hop, language modelling) implements, so a trainer or an
 * evaluator can take any of them.
 */
import type { TextTokenizer } from "./lm/tokenizer.js";
import type { Vocabulary } from "./vocabulary.js";

/** Target value meaning "no loss at this position" (PyTorch's `ignore_index`). */
export const IGNORE_INDEX = -100;

/** One batch: row-major `[B, T]` token ids and next-token/answer targets. */
export interface Batch {
  /** Input token ids, `shape[0] × shape[1]`, row-major. */
  tokens: Int32Array;
  /** Target ids at the positions that carry a loss, `IGNORE_INDEX` elsewhere. Same shape. */
  targets: Int32Array;
  /** `[B, T]`. */
  shape: [number, number];
  /**
   * Rows that pack several documents: the document index of every position (mamba_ssm's
   * seq_idx, non-decreasing along a row); models reset their state at each change. Absent: one
   * document per row.
   */
  seqIdx?: Int32Array;
}

/**
 * Where a training stream stands: plain JSON, store it in a checkpoint to resume exactly.
 * `position` counts the rows (examples or windows) already handed out for `seed`.
 */
export interface TaskCursor {
  seed: number;
  position: number;
}

/** Accuracy over the scored positions of a batch (or a sum of batches). */
export interface Score {
  correct: number;
  total: number;
  /** `correct / total` (0 when `total` is 0). */
  accuracy: number;
}

/**
 * An evaluation set made batch by batch as it is read, so that a large one is never held whole
 * (the same batches, in the same order, as the task's evalSet).
 */
export interface EvalBatches extends Iterable<Batch> {
  /** Rows in all. */
  readonly rows: number;
  /** Batches in all. */
  readonly batches: number;
}

/** Which evaluation set to build: rows, rows per batch and seed. */
export interface EvalSetOptions {
  /** Number of rows (examples or windows). */
  count: number;
  batchSize: number;
  /** The eval set is a pure function of this seed (a task-specific default when omitted). */
  seed?: number;
}

/**
 * How evaluation scores a task: "accuracy", exact match at the scored positions (`task.score`),
 * or "ppl", perplexity of the targets (language modelling).
 */
export type TaskMetric = "accuracy" | "ppl";

/**
 * What every task provides (Mano, p-hop, language modelling, or your own): vocabulary, sequence
 * length, a seeded resumable training stream, a fixed evaluation set and its scorer.
 */
export interface Task {
  readonly name: string;
  readonly metric: TaskMetric;
  /** The tokenizer between text and ids, for tasks over text; null for symbolic tasks. */
  readonly tokenizer: TextTokenizer | null;
  readonly vocab: Vocabulary;
  readonly vocabSize: number;
  /** T: the sequence length of every batch this task produces. */
  readonly seqLen: number;
  /** The padding token id, or null when batches never need padding. */
  readonly padId: number | null;
  /** The start of a training stream. */
  startCursor(seed: number): TaskCursor;
  /** The next `batchSize` training rows after `cursor`, and the cursor after them. */
  trainBatch(cursor: TaskCursor, batchSize: number): { batch: Batch; cursor: TaskCursor };
  /** A fixed evaluation set, split into batches of at most `batchSize` rows. */
  evalSet(options: EvalSetOptions): Batch[];
  /**
   * The batches of `evalSet`, each made when it is read (a large set is never held whole).
   * Optional: without it `taskEvalBatches` reads `evalSet` whole.
   */
  evalBatches?(options: EvalSetOptions): EvalBatches;
  /**
   * Compare predicted ids `[B, T]` (e.g. `argmaxLogits`) with the batch's targets at the scored
   * positions. Mano and p-hop have one scored position per row, so this is exact-match accuracy.
   */
  score(batch: Batch, predicted: Int32Array): Score;
}

/**
 * The evaluation batches of `task`: its own `evalBatches` (made as they are read) where it has one,
 * else its `evalSet`, built whole.
 */
export function taskEvalBatches(task: Task, options: EvalSetOptions): EvalBatches {
  if (task.evalBatches) return task.evalBatches(options);
  const set = task.evalSet(options);
  return {
    rows: set.reduce((n, b) => n + b.shape[0], 0),
    batches: set.length,
    [Symbol.iterator]: () => set[Symbol.iterator](),
  };
}

/** Throws unless every token id of `task` is an id of a model with `vocabSize` tokens. */
export function checkTaskVocab(task: Task, vocabSize: number): void {
  if (task.vocabSize > vocabSize)
    throw new Error(
      `task ${task.name} has ${task.vocabSize} symbols but the model's vocab_size is ${vocabSize}`,
    );
}
