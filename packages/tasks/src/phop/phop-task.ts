/*
 * The p-hop induction task (docs/tasks.md "p-hop induction"). A row is v_1..v_n over the
 * alphabet "a", "b", … (ids 0..|Σ|−1); the only target is the answer `v_{find_p(n)}` at the last
 * position n (0-based index n − 1). No padding: every row has length n.
 *
 * Sampling: v_1 uniform over Σ, then each token uniform over Σ minus the previous token; the
 * whole sequence is redrawn (from the same stream) until the p-hop answer is defined, at most
 * `maxAttempts` times, after which the configuration is reported as unable to produce examples.
 * Row i of the training stream for seed s comes from `Rng(deriveSeed(s, "phop/train", i))`.
 * With `mixedHops` each row first draws its own p uniformly from 1..hops from that stream, so
 * sequences of every difficulty up to `hops` are mixed in one batch; the row then opens with a
 * hop-count token "#p" (ids |Σ|..|Σ|+hops−1) followed by v_1..v_{n−1}, since without it the
 * answer would not be a function of the input (the same symbols answer differently under
 * different p).
 */

import { deriveSeed, Rng } from "@loop/tensor";
import { allocBatch, evalRows, positiveInt, StreamTask, trainRows } from "../batch.js";
import type { Batch, EvalBatches, EvalSetOptions, Task, TaskCursor } from "../task.js";
import { Vocabulary } from "../vocabulary.js";
import { alphabetSymbols, pHopPosition, pHopPositionsAll } from "./hops.js";

/**
 * p-hop's sizes: alphabet |Σ|, sequence length n, hops p, and how often a sequence may be redrawn.
 */
export interface PHopConfig {
  /** |Σ| ≥ 2 (default 4). */
  alphabet?: number;
  /** n, the sequence length (default 256); must be ≥ hops + 2. */
  length?: number;
  /** p ≥ 1 (default 16). */
  hops?: number;
  /** Whole-sequence redraws before giving up (default 1000). */
  maxAttempts?: number;
  /**
   * Training rows also carry a target at every earlier position whose own p-hop answer is
   * defined (the answer of the prefix v_1..v_i). Evaluation is unchanged: position n only.
   * A denser learning signal for small experiments; off by default (the task of docs/tasks.md).
   */
  dense?: boolean;
  /**
   * Each sequence draws its own number of hops p uniformly from 1..hops (a task whose needed
   * depth varies per sequence) and opens with the token "#p" that says it; evaluation can score
   * each p apart (`evalSetOfHops`).
   */
  mixedHops?: boolean;
}

/** One p-hop example as symbols: p, the sequence and the answer. */
export interface PHopExample {
  hops: number;
  /** v_1..v_n as symbols (with `mixedHops`: "#p", then v_1..v_{n−1}). */
  input: string[];
  /** v_{find_p(n)}. */
  answer: string;
}

/** The default seed of p-hop's evaluation set. */
export const PHOP_DEFAULT_EVAL_SEED = 0x70686f70; // "phop"

/**
 * p-hop induction (docs/tasks.md) as a `Task`: follow p hops back through a sequence, scored at the
 * last position (or every prefix when dense).
 */
export class PHopTask extends StreamTask implements Task {
  /** The task's name, e.g. `phop-a4-n256-p16`. */
  readonly name: string;
  /** p-hop is scored by exact-match accuracy. */
  readonly metric = "accuracy";
  /** A symbolic task: no tokenizer. */
  readonly tokenizer = null;
  /** |Σ|, the alphabet size. */
  readonly alphabet: number;
  /** n, the sequence length. */
  readonly length: number;
  /** p, the number of hops. */
  readonly hops: number;
  /** How many times a sequence may be redrawn before sampling gives up. */
  readonly maxAttempts: number;
  /** Whether every prefix's answer is a target (dense) or only the last position's. */
  readonly dense: boolean;
  /** Whether each sequence draws its own number of hops from 1..hops (and opens with it). */
  readonly mixedHops: boolean;
  /** The alphabet's symbols. */
  readonly vocab: Vocabulary;
  /** Every sequence has length n: no padding. */
  readonly padId = null;

  constructor(config: PHopConfig = {}) {
    super();
    this.alphabet = positiveInt("alphabet", config.alphabet ?? 4, 2);
    this.hops = positiveInt("hops", config.hops ?? 16, 1);
    this.length = positiveInt("length", config.length ?? 256, 1);
    this.maxAttempts = positiveInt("maxAttempts", config.maxAttempts ?? 1000, 1);
    this.mixedHops = config.mixedHops ?? false;
    // Each hop moves back by ≥ 1 (no immediate repeats) and the first needs a repeat at ≤ n − 2;
    // a mixed row spends its first position on the hop count.
    const need = this.hops + (this.mixedHops ? 3 : 2);
    if (this.length < need)
      throw new Error(
        `length must be ≥ hops + ${need - this.hops} = ${need} for a defined ${this.hops}-hop answer${this.mixedHops ? " after the hop-count token" : ""}, got ${this.length}`,
      );
    this.dense = config.dense ?? false;
    const p = this.mixedHops ? `p1-${this.hops}` : `p${this.hops}`;
    this.name = `phop-a${this.alphabet}-n${this.length}-${p}${this.dense ? "-dense" : ""}`;
    const hopTokens = this.mixedHops
      ? Array.from({ length: this.hops }, (_, i) => `#${i + 1}`)
      : [];
    this.vocab = new Vocabulary([...alphabetSymbols(this.alphabet), ...hopTokens]);
  }

  /** The number of symbols, |Σ|. */
  get vocabSize(): number {
    return this.vocab.size;
  }

  /** Positions holding the alphabet's symbols: n, or n − 1 after a mixed row's hop token. */
  private get symbols(): number {
    return this.mixedHops ? this.length - 1 : this.length;
  }

  /** T = n. */
  get seqLen(): number {
    return this.length;
  }

  /** The row's number of hops: `hops`, or with `mixedHops` its own draw from 1..hops. */
  private drawHops(rng: Rng): number {
    return this.mixedHops ? 1 + rng.int(this.hops) : this.hops;
  }

  /**
   * Draw ids v_1..v_n (0-based array) and the answer id of `hops` hops, redrawing until it is
   * defined.
   */
  sampleIds(rng: Rng, hops = this.hops): { ids: Int32Array; answer: number } {
    const A = this.alphabet;
    const ids = new Int32Array(this.symbols);
    for (let attempt = 0; attempt < this.maxAttempts; attempt++) {
      let prev = rng.int(A);
      ids[0] = prev;
      for (let i = 1; i < ids.length; i++) {
        const r = rng.int(A - 1);
        prev = r >= prev ? r + 1 : r;
        ids[i] = prev;
      }
      const pos = pHopPosition(ids, hops, A);
      if (pos > 0) return { ids, answer: ids[pos - 1]! };
    }
    throw new Error(
      `p-hop: no sequence with a defined answer after ${this.maxAttempts} attempts ` +
        `(hops ${hops}, length ${this.length}, alphabet ${A}); lower hops or raise length`,
    );
  }

  /** One example drawn from `rng`. */
  sample(rng: Rng): PHopExample {
    const hops = this.drawHops(rng);
    const { ids, answer } = this.sampleIds(rng, hops);
    const input = this.vocab.decode(ids);
    if (this.mixedHops) input.unshift(`#${hops}`);
    return { hops, input, answer: this.vocab.symbol(answer) };
  }

  /** Example `index` of the training stream `seed`. */
  trainExample(seed: number, index: number): PHopExample {
    return this.sample(new Rng(deriveSeed(seed, "phop/train", index)));
  }

  /** Example `index` of the evaluation set `seed`. */
  evalExample(seed: number, index: number): PHopExample {
    return this.sample(new Rng(deriveSeed(seed, "phop/eval", index)));
  }

  private rows(
    streamSeed: (i: number) => number,
    start: number,
    count: number,
    dense = false,
  ): Batch {
    const T = this.length;
    const batch = allocBatch(count, T, 0);
    for (let b = 0; b < count; b++) {
      const rng = new Rng(streamSeed(start + b));
      const hops = this.drawHops(rng);
      const { ids, answer } = this.sampleIds(rng, hops);
      // a mixed row: its hop-count token, then the symbols one position later
      const at = b * T + (this.mixedHops ? 1 : 0);
      if (this.mixedHops) batch.tokens[b * T] = this.alphabet + hops - 1;
      batch.tokens.set(ids, at);
      if (dense) {
        const pos = pHopPositionsAll(ids, hops, this.alphabet);
        for (let i = 0; i < ids.length; i++)
          if (pos[i]! > 0) batch.targets[at + i] = ids[pos[i]! - 1]!;
      }
      batch.targets[b * T + T - 1] = answer;
    }
    return batch;
  }

  /** The next `batchSize` training sequences after `cursor` and the cursor after them. */
  trainBatch(cursor: TaskCursor, batchSize: number): { batch: Batch; cursor: TaskCursor } {
    return trainRows(cursor, batchSize, (start, n) =>
      this.rows((i) => deriveSeed(cursor.seed, "phop/train", i), start, n, this.dense),
    );
  }

  /** The fixed evaluation set, in batches. */
  evalSet(options: EvalSetOptions): Batch[] {
    return [...this.evalBatches(options)];
  }

  evalBatches(options: EvalSetOptions): EvalBatches {
    const count = positiveInt("count", options.count);
    const seed = options.seed ?? PHOP_DEFAULT_EVAL_SEED;
    return evalRows(count, options.batchSize, (start, n) =>
      this.rows((i) => deriveSeed(seed, "phop/eval", i), start, n),
    );
  }

  /** The number of hops of each of the first `count` rows of the eval set (seed as evalSet's). */
  evalHops(count: number, seed = PHOP_DEFAULT_EVAL_SEED): Int32Array {
    const out = new Int32Array(positiveInt("count", count));
    for (let i = 0; i < out.length; i++)
      out[i] = this.drawHops(new Rng(deriveSeed(seed, "phop/eval", i)));
    return out;
  }

  /**
   * The rows of `evalSet(options)` whose number of hops is `hops`, in their order there, batched
   * alike: the eval set split by difficulty (empty when no row has that p).
   */
  evalSetOfHops(options: EvalSetOptions, hops: number): Batch[] {
    const seed = options.seed ?? PHOP_DEFAULT_EVAL_SEED;
    const all = this.evalHops(options.count, seed);
    const rows: number[] = [];
    all.forEach((p, i) => {
      if (p === hops) rows.push(i);
    });
    if (rows.length === 0) return [];
    return [
      ...evalRows(rows.length, options.batchSize, (start, n) =>
        this.rows((i) => deriveSeed(seed, "phop/eval", rows[i]!), start, n),
      ),
    ];
  }
}

/** The p-hop task (defaults |Σ| = 4, n = 256, p = 16). */
export function pHop(config: PHopConfig = {}): PHopTask {
  return new PHopTask(config);
}
