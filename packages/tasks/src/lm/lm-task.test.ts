import { describe, expect, it } from "vitest";
import { buildCharTokenizer } from "./char-tokenizer.js";
import { encodeDocuments, LanguageModelTask } from "./lm-task.js";

const docs = [
  { name: "a", text: "the quick brown fox jumps over the lazy dog. ".repeat(4) },
  { name: "b", text: "pack my box with five dozen liquor jugs! ".repeat(3) },
];
const tok = buildCharTokenizer(docs.map((d) => d.text));
const train = encodeDocuments(tok, docs);
const validation = encodeDocuments(tok, [{ name: "v", text: "the lazy dog jumps. ".repeat(5) }]);
const T = 16;
const task = new LanguageModelTask({ tokenizer: tok, train, validation, seqLen: T });

describe("LanguageModelTask", () => {
  it("joins documents with the end-of-text token", () => {
    const n0 = docs[0]!.text.length;
    expect(train.length).toBe(n0 + 1 + docs[1]!.text.length);
    expect(train[n0]).toBe(tok.eosId);
    expect(tok.decode(train.subarray(0, n0))).toBe(docs[0]!.text);
  });

  it("numbers the documents of every window: a new one starts at each end-of-text token", () => {
    const n0 = docs[0]!.text.length; // the end-of-text token sits at stream position n0
    const w = Math.floor(n0 / T); // the training window holding it
    const all = task.trainBatch(task.startCursor(1), task.trainWindows).batch;
    const row = Array.from({ length: task.trainWindows }, (_, b) => all.tokens[b * T]).findIndex(
      (_, b) => all.tokens.subarray(b * T, b * T + T).includes(tok.eosId!),
    );
    expect(row).toBeGreaterThanOrEqual(0);
    const toks = all.tokens.subarray(row * T, row * T + T);
    const seq = all.seqIdx!.subarray(row * T, row * T + T);
    const at = toks.indexOf(tok.eosId!);
    expect(Array.from(seq)).toEqual(
      Array.from({ length: T }, (_, t) => (t >= at && at > 0 ? 1 : 0)),
    );
    expect(w).toBeGreaterThanOrEqual(0);
    // windows inside one document hold a single document
    const other = all.seqIdx!.subarray(
      ((row + 1) % task.trainWindows) * T,
      ((row + 1) % task.trainWindows) * T + T,
    );
    expect(other.every((v) => v === other[0])).toBe(true);
    // evaluation batches carry it too
    expect(task.evalSet({ count: 2, batchSize: 2 })[0]!.seqIdx).toBeInstanceOf(Int32Array);
  });

  it("packs windows with next-token targets and visits each window once per epoch", () => {
    const W = task.trainWindows;
    expect(W).toBe(Math.floor((train.length - 1) / T));
    const seen: number[][] = [[], []];
    let cursor = task.startCursor(7);
    for (let step = 0; step < 2 * W; step++) {
      const r = task.trainBatch(cursor, 1);
      cursor = r.cursor;
      const { tokens, targets } = r.batch;
      expect(targets.subarray(0, T - 1)).toEqual(tokens.subarray(1));
      // the first window whose content equals the row (repeated text makes some coincide)
      let found = -1;
      for (let k = 0; k < W && found < 0; k++)
        if (
          train.subarray(k * T, k * T + T).every((v, i) => v === tokens[i]) &&
          train[k * T + T] === targets[T - 1]
        )
          found = k;
      expect(found).toBeGreaterThanOrEqual(0);
      seen[Math.floor(step / W)]!.push(found);
    }
    // windows may coincide in content (repeated text), so compare multisets of content
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    expect(seen[0]!.length).toBe(W);
    expect(sorted(seen[0]!)).toEqual(sorted(seen[1]!));
    expect(cursor).toEqual({ seed: 7, position: 2 * W });
  });

  it("shuffles by seed and resumes exactly from a cursor", () => {
    const big = task.trainBatch(task.startCursor(3), 10).batch;
    const a = task.trainBatch(task.startCursor(3), 4);
    const b = task.trainBatch(JSON.parse(JSON.stringify(a.cursor)), 6).batch;
    expect([...a.batch.tokens, ...b.tokens]).toEqual([...big.tokens]);
    expect([...a.batch.targets, ...b.targets]).toEqual([...big.targets]);
    const other = task.trainBatch(task.startCursor(4), 10).batch;
    expect([...other.tokens]).not.toEqual([...big.tokens]);
  });

  it("evaluates on validation windows in order and scores next-token accuracy", () => {
    const set = task.evalSet({ count: 1000, batchSize: 2 });
    const rows = set.reduce((n, b) => n + b.shape[0], 0);
    expect(rows).toBe(task.validationWindows);
    expect(set[0]!.tokens.subarray(0, T)).toEqual(validation.subarray(0, T));
    expect(set[0]!.targets.subarray(0, T)).toEqual(validation.subarray(1, T + 1));
    const s = task.score(set[0]!, set[0]!.targets.slice());
    expect(s).toEqual({ correct: 2 * T, total: 2 * T, accuracy: 1 });
  });

  it("rejects streams shorter than one window and out-of-range ids", () => {
    expect(
      () =>
        new LanguageModelTask({
          tokenizer: tok,
          train,
          validation: validation.subarray(0, 5),
          seqLen: T,
        }),
    ).toThrow(/validation split has 5 tokens, fewer than seqLen \+ 1 = 17/);
    expect(
      () =>
        new LanguageModelTask({
          tokenizer: tok,
          train: Int32Array.of(...train.subarray(0, 20), 999),
          validation,
          seqLen: T,
        }),
    ).toThrow(/train\[20\] must be a token id/);
  });
});
