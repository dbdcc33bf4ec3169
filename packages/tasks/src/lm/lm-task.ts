/*
 * Language modelling over a packed token stream. The documents of a split are encoded and
 * joined with the tokenizer's end-of-text token (when it has one) into one stream s. Window w
 * covers s[w·T .. w·T + T] (T + 1 tokens, consecutive windows share one token): tokens are
 * its first T, targets its last T (next-token prediction, every position scored).
 *
 * Training visits the windows epoch by epoch, each epoch in a fresh seeded order
 * (`Rng(deriveSeed(seed, "lm/epoch", e))` shuffles 0..W−1), so row p of a stream is window
 * `order_e[p mod W]` with e = ⌊p / W⌋: a pure function of (seed, p). Evaluation uses the
 * validation windows in order.
 * A window that spans a document boundary packs several documents: `batch.seqIdx` numbers them
 * (a new document starts at each end-of-text token, which then acts as the next document's
 * first token), so a model resets its state there and never reads across documents.
 */

import { deriveSeed, Rng } from "@loop/tensor";
import { allocBatch, evalRows, positiveInt, StreamTask, trainRows } from "../batch.js";
import type { Batch, EvalBatches, EvalSetOptions, Task, TaskCursor } from "../task.js";
import { Vocabulary } from "../vocabulary.js";
import type { TextDocument } from "./corpus.js";
import { IdBuffer, type TextTokenizer } from "./tokenizer.js";

/** Encode documents into one stream, separated by `eosId` when it is not null. */
export function encodeDocuments(
  tokenizer: TextTokenizer,
  docs: readonly TextDocument[],
): Int32Array {
  const out = new IdBuffer();
  docs.forEach((d, i) => {
    if (i > 0 && tokenizer.eosId !== null) out.push(tokenizer.eosId);
    out.pushAll(tokenizer.encode(d.text));
  });
  return out.toArray();
}

/**
 * What a language-modelling task is made of: a tokenizer, the encoded training and validation
 * streams and the window length.
 */
export interface LanguageModelTaskOptions {
  tokenizer: TextTokenizer;
  /** Encoded training stream (see `encodeDocuments`). */
  train: Int32Array;
  /** Encoded validation stream. */
  validation: Int32Array;
  /** T, the window length. */
  seqLen: number;
  name?: string;
}

/**
 * Language modelling as a `Task`: windows of T tokens from an encoded corpus, next-token targets,
 * perplexity as its metric.
 */
export class LanguageModelTask extends StreamTask implements Task {
  /** The task's name (given, or from the tokenizer's kind and size). */
  readonly name: string;
  /** Language modelling is scored by perplexity. */
  readonly metric = "ppl";
  /** The tokenizer between text and ids. */
  readonly tokenizer: TextTokenizer;
  /** The tokenizer's vocabulary. */
  readonly vocab: Vocabulary;
  /** T: the window length. */
  readonly seqLen: number;
  /** Windows are always full: no padding. */
  readonly padId = null;
  /** The encoded training stream. */
  readonly train: Int32Array;
  /** The encoded validation stream. */
  readonly validation: Int32Array;
  private epochOrder: { seed: number; epoch: number; order: Int32Array } | null = null;

  constructor(options: LanguageModelTaskOptions) {
    super();
    this.seqLen = positiveInt("seqLen", options.seqLen);
    this.tokenizer = options.tokenizer;
    this.name = options.name ?? `lm-${options.tokenizer.kind}${options.tokenizer.vocabSize}`;
    this.vocab = new Vocabulary(
      Array.from({ length: options.tokenizer.vocabSize }, (_, i) => options.tokenizer.idToToken(i)),
    );
    this.train = options.train;
    this.validation = options.validation;
    for (const [what, s] of [
      ["train", this.train],
      ["validation", this.validation],
    ] as const) {
      if (s.length < this.seqLen + 1)
        throw new Error(
          `${what} split has ${s.length} tokens, fewer than seqLen + 1 = ${this.seqLen + 1}`,
        );
      for (let i = 0; i < s.length; i++)
        if (s[i]! < 0 || s[i]! >= this.vocab.size)
          throw new Error(
            `${what}[${i}] must be a token id in [0, ${this.vocab.size - 1}], got ${s[i]}`,
          );
    }
  }

  /** The number of token ids. */
  get vocabSize(): number {
    return this.vocab.size;
  }

  /** Number of training windows (rows per epoch). */
  get trainWindows(): number {
    return Math.floor((this.train.length - 1) / this.seqLen);
  }

  /** Number of validation windows. */
  get validationWindows(): number {
    return Math.floor((this.validation.length - 1) / this.seqLen);
  }

  private order(seed: number, epoch: number): Int32Array {
    const c = this.epochOrder;
    if (c && c.seed === seed && c.epoch === epoch) return c.order;
    const order = Int32Array.from({ length: this.trainWindows }, (_, i) => i);
    new Rng(deriveSeed(seed, "lm/epoch", epoch)).shuffle(order);
    this.epochOrder = { seed, epoch, order };
    return order;
  }

  private writeWindow(batch: Batch, row: number, stream: Int32Array, w: number): void {
    const T = this.seqLen;
    batch.tokens.set(stream.subarray(w * T, w * T + T), row * T);
    batch.targets.set(stream.subarray(w * T + 1, w * T + T + 1), row * T);
  }

  /** batch.seqIdx: per row, +1 at every end-of-text token after position 0 (none without one). */
  private markDocuments(batch: Batch): void {
    const eos = this.tokenizer.eosId;
    if (eos === null) return;
    const [B, T] = batch.shape;
    const seq = new Int32Array(B * T);
    for (let b = 0; b < B; b++) {
      let d = 0;
      for (let t = 0; t < T; t++) {
        if (t > 0 && batch.tokens[b * T + t] === eos) d++;
        seq[b * T + t] = d;
      }
    }
    batch.seqIdx = seq;
  }

  /** The next `batchSize` training windows after `cursor` and the cursor after them. */
  trainBatch(cursor: TaskCursor, batchSize: number): { batch: Batch; cursor: TaskCursor } {
    const W = this.trainWindows;
    return trainRows(cursor, batchSize, (start, n) => {
      const batch = allocBatch(n, this.seqLen, 0);
      for (let b = 0; b < n; b++) {
        const p = start + b;
        this.writeWindow(batch, b, this.train, this.order(cursor.seed, Math.floor(p / W))[p % W]!);
      }
      this.markDocuments(batch);
      return batch;
    });
  }

  /** The first `min(count, validationWindows)` validation windows, in order (`seed` unused). */
  evalSet(options: EvalSetOptions): Batch[] {
    return [...this.evalBatches(options)];
  }

  evalBatches(options: EvalSetOptions): EvalBatches {
    const count = Math.min(positiveInt("count", options.count), this.validationWindows);
    return evalRows(count, options.batchSize, (start, n) => {
      const batch = allocBatch(n, this.seqLen, 0);
      for (let b = 0; b < n; b++) this.writeWindow(batch, b, this.validation, start + b);
      this.markDocuments(batch);
      return batch;
    });
  }
}
