import { describe, expect, it } from "vitest";
import { pHop } from "./phop/phop-task.js";
import { type Task, taskEvalBatches } from "./task.js";

describe("taskEvalBatches", () => {
  const options = { count: 10, batchSize: 4, seed: 3 };

  it("reads a task's own batches as they are made: the same rows as its evalSet", () => {
    const task = pHop({ alphabet: 3, length: 12, hops: 2 });
    const made = taskEvalBatches(task, options);
    expect([made.rows, made.batches]).toEqual([10, 3]);
    const whole = task.evalSet(options);
    expect([...made].map((b) => [...b.tokens])).toEqual(whole.map((b) => [...b.tokens]));
  });

  it("falls back to evalSet for a task without evalBatches (a user's own task)", () => {
    const inner = pHop({ alphabet: 3, length: 12, hops: 2 });
    let built = 0;
    const own: Task = {
      name: inner.name,
      metric: inner.metric,
      tokenizer: inner.tokenizer,
      vocab: inner.vocab,
      vocabSize: inner.vocabSize,
      seqLen: inner.seqLen,
      padId: inner.padId,
      startCursor: (seed) => inner.startCursor(seed),
      trainBatch: (c, n) => inner.trainBatch(c, n),
      evalSet: (o) => {
        built++;
        return inner.evalSet(o);
      },
      score: (b, p) => inner.score(b, p),
    };
    const made = taskEvalBatches(own, options);
    expect(built).toBe(1);
    expect([made.rows, made.batches]).toEqual([10, 3]);
    const T = inner.seqLen;
    expect([...made].map((b) => b.shape)).toEqual([
      [4, T],
      [4, T],
      [2, T],
    ]);
  });
});
