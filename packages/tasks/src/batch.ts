/* Batch helpers shared by the tasks: allocation, argmax over logits, scoring, cursors. */
import { type Batch, type EvalBatches, IGNORE_INDEX, type Score, type TaskCursor } from "./task.js";

export function positiveInt(name: string, v: number, min = 1): number {
  if (!Number.isSafeInteger(v) || v < min)
    throw new Error(`${name} must be an integer ≥ ${min}, got ${v}`);
  return v;
}

/** An empty batch: tokens filled with `padId`, targets with `IGNORE_INDEX`. */
export function allocBatch(batchSize: number, seqLen: number, padId = 0): Batch {
  const n = batchSize * seqLen;
  return {
    tokens: new Int32Array(n).fill(padId),
    targets: new Int32Array(n).fill(IGNORE_INDEX),
    shape: [batchSize, seqLen],
  };
}

/** Argmax over the last axis of logits `[..., V]` → ids `[...]` (first maximum wins). */
export function argmaxLogits(logits: Float32Array, vocabSize: number): Int32Array {
  positiveInt("vocabSize", vocabSize);
  if (logits.length % vocabSize !== 0)
    throw new Error(
      `logits: length must be a multiple of vocabSize ${vocabSize}, got ${logits.length}`,
    );
  const rows = logits.length / vocabSize;
  const out = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    const o = r * vocabSize;
    let best = 0;
    let bv = logits[o]!;
    for (let v = 1; v < vocabSize; v++) {
      const x = logits[o + v]!;
      if (x > bv) {
        bv = x;
        best = v;
      }
    }
    out[r] = best;
  }
  return out;
}

/** Count predicted ids equal to the targets at every non-ignored position. */
export function scoreTargets(batch: Batch, predicted: Int32Array): Score {
  if (predicted.length !== batch.targets.length)
    throw new Error(
      `predicted: expected ${batch.targets.length} ids ([${batch.shape.join(", ")}]), got ${predicted.length}`,
    );
  let correct = 0;
  let total = 0;
  const t = batch.targets;
  for (let i = 0; i < t.length; i++) {
    if (t[i] === IGNORE_INDEX) continue;
    total++;
    if (predicted[i] === t[i]) correct++;
  }
  return { correct, total, accuracy: total === 0 ? 0 : correct / total };
}

export function checkCursor(cursor: TaskCursor): void {
  if (
    cursor === null ||
    typeof cursor !== "object" ||
    !Number.isInteger(cursor.seed) ||
    cursor.seed < 0 ||
    cursor.seed > 0xffffffff ||
    !Number.isSafeInteger(cursor.position) ||
    cursor.position < 0
  )
    throw new Error(
      `cursor: expected {seed: uint32, position: integer ≥ 0}, got ${JSON.stringify(cursor)}`,
    );
}

/** What the tasks share: streams that start at position 0, exact-match scoring. */
export abstract class StreamTask {
  startCursor(seed: number): TaskCursor {
    const c = { seed, position: 0 };
    checkCursor(c);
    return c;
  }

  /** Exact match at every scored position (scoreTargets). */
  score(batch: Batch, predicted: Int32Array): Score {
    return scoreTargets(batch, predicted);
  }
}

/** The training batch `rows(position, batchSize)` at `cursor`, and the cursor after it. */
export function trainRows(
  cursor: TaskCursor,
  batchSize: number,
  rows: (position: number, n: number) => Batch,
): { batch: Batch; cursor: TaskCursor } {
  checkCursor(cursor);
  positiveInt("batchSize", batchSize);
  const batch = rows(cursor.position, batchSize);
  return { batch, cursor: { seed: cursor.seed, position: cursor.position + batchSize } };
}

/**
 * Rows 0..count−1 in batches of `batchSize`, each made when it is read: `rows(start, n)` makes
 * rows start..start+n−1.
 */
export function evalRows(
  count: number,
  batchSize: number,
  rows: (start: number, n: number) => Batch,
): EvalBatches {
  const bs = positiveInt("batchSize", batchSize);
  return {
    rows: count,
    batches: Math.ceil(count / bs),
    *[Symbol.iterator]() {
      for (let start = 0; start < count; start += bs)
        yield rows(start, Math.min(bs, count - start));
    },
  };
}
