import { Rng } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { argmaxLogits } from "../batch.js";
import { IGNORE_INDEX } from "../task.js";
import { chiSquareUniform } from "../testing/chi-square.test-util.js";
import { mano } from "./mano-task.js";

/** Independent evaluator: scan the prefix expression right to left with a value stack. */
function independentEval(expr: string[]): number {
  const stack: number[] = [];
  for (let i = expr.length - 1; i >= 0; i--) {
    const t = expr[i]!;
    if (t === "+" || t === "-" || t === "*") {
      const a = stack.pop();
      const b = stack.pop();
      if (a === undefined || b === undefined) throw new Error("malformed");
      const r = t === "+" ? a + b : t === "-" ? a - b : a * b;
      stack.push(((r % 23) + 23) % 23);
    } else stack.push(Number.parseInt(t, 10));
  }
  if (stack.length !== 1) throw new Error("malformed");
  return stack[0]!;
}

/** Number of operators in the root's left subtree (prefix notation). */
function leftOps(expr: string[]): number {
  let need = 1;
  let ops = 0;
  for (let i = 1; i < expr.length; i++) {
    const isOp = ["+", "-", "*"].includes(expr[i]!);
    if (isOp) ops++;
    need += isOp ? 1 : -1;
    if (need === 0) return ops;
  }
  throw new Error("malformed");
}

describe("mano", () => {
  it("has the documented vocabulary", () => {
    const t = mano({ maxOps: 3 });
    expect(t.vocab.symbols).toEqual([
      ...Array.from({ length: 23 }, (_, i) => String(i)),
      "+",
      "-",
      "*",
      "<bos>",
      "<len_0>",
      "<len_1>",
      "<len_2>",
      "<len_3>",
      "<ans>",
      "<pad>",
    ]);
    expect(t.vocabSize).toBe(33);
    expect(t.seqLen).toBe(10);
  });

  it("evaluates the prefix example of docs/tasks.md", () => {
    expect(independentEval(["+", "*", "3", "4", "5"])).toBe(17);
  });

  it("produces well-formed examples whose answers an independent evaluator confirms", () => {
    for (const L of [1, 2, 10, 24, 32]) {
      const t = mano({ maxOps: L });
      for (let i = 0; i < 300; i++) {
        const ex = t.trainExample(11, i);
        expect(ex.input[0]).toBe("<bos>");
        expect(ex.input[1]).toBe(`<len_${ex.ops}>`);
        expect(ex.input.at(-1)).toBe("<ans>");
        const expr = ex.input.slice(2, -1);
        expect(expr.length).toBe(2 * ex.ops + 1);
        expect(expr.filter((s) => s === "+" || s === "-" || s === "*").length).toBe(ex.ops);
        expect(ex.ops >= 1 && ex.ops <= L).toBe(true);
        expect(ex.answer).toBe(String(independentEval(expr)));
      }
    }
  });

  it("draws ℓ uniformly from 1..L, operators over 3, leaves over 23", () => {
    const L = 10;
    const t = mano({ maxOps: L });
    const lens = new Array(L).fill(0);
    const ops = { "+": 0, "-": 0, "*": 0 } as Record<string, number>;
    const leaves = new Array(23).fill(0);
    for (let i = 0; i < 6000; i++) {
      const ex = t.trainExample(3, i);
      lens[ex.ops - 1]++;
      for (const s of ex.input.slice(2, -1)) {
        if (s in ops) ops[s]!++;
        else leaves[Number(s)]++;
      }
    }
    for (const counts of [lens, Object.values(ops), leaves]) {
      const { stat, critical } = chiSquareUniform(counts);
      expect(stat).toBeLessThan(critical);
    }
  });

  it("splits operators between subtrees uniformly (tree-shape rule)", () => {
    const t = mano({ maxOps: 8 });
    const counts = new Array(8).fill(0);
    const rng = new Rng(5);
    for (let i = 0; i < 4000; i++) counts[leftOps(t.sample(rng, 8).input.slice(2, -1))]++;
    const { stat, critical } = chiSquareUniform(counts);
    expect(stat).toBeLessThan(critical);
  });

  it("is deterministic: same seed, identical bytes; another seed differs", () => {
    const a = mano({ maxOps: 16 });
    const b = mano({ maxOps: 16 });
    const dump = (s: number) =>
      JSON.stringify(Array.from({ length: 50 }, (_, i) => a.trainExample(s, i)));
    expect(JSON.stringify(Array.from({ length: 50 }, (_, i) => b.trainExample(9, i)))).toBe(
      dump(9),
    );
    expect(dump(10)).not.toBe(dump(9));
    const ba = a.trainBatch(a.startCursor(4), 8).batch;
    const bb = b.trainBatch(b.startCursor(4), 8).batch;
    expect(Buffer.from(ba.tokens.buffer)).toEqual(Buffer.from(bb.tokens.buffer));
  });

  it("builds right-padded batches with the answer target at <ans>", () => {
    const t = mano({ maxOps: 6 });
    const { batch, cursor } = t.trainBatch(t.startCursor(1), 32);
    expect(batch.shape).toEqual([32, 16]);
    expect(cursor).toEqual({ seed: 1, position: 32 });
    for (let b = 0; b < 32; b++) {
      const ex = t.trainExample(1, b);
      const row = Array.from(batch.tokens.subarray(b * 16, b * 16 + 16));
      const tgt = Array.from(batch.targets.subarray(b * 16, b * 16 + 16));
      const n = ex.input.length;
      expect(t.vocab.decode(row.slice(0, n))).toEqual(ex.input);
      expect(row.slice(n).every((id) => id === t.padId)).toBe(true);
      const ansPos = 2 * ex.ops + 3;
      expect(row[ansPos]).toBe(t.vocab.id("<ans>"));
      tgt.forEach((v, i) => {
        expect(v).toBe(i === ansPos ? t.vocab.id(ex.answer) : IGNORE_INDEX);
      });
    }
  });

  it("resumes exactly from a serialised cursor, whatever the batch size", () => {
    const t = mano({ maxOps: 5 });
    const whole = t.trainBatch(t.startCursor(8), 12).batch;
    const first = t.trainBatch(t.startCursor(8), 5);
    const resumed = t.trainBatch(JSON.parse(JSON.stringify(first.cursor)), 7).batch;
    expect([...first.batch.tokens, ...resumed.tokens]).toEqual([...whole.tokens]);
    expect([...first.batch.targets, ...resumed.targets]).toEqual([...whole.targets]);
  });

  it("evaluates on a fixed set with ℓ = L only and scores exact match", () => {
    const t = mano({ maxOps: 4 });
    const set = t.evalSet({ count: 10, batchSize: 4 });
    expect(set.map((b) => b.shape[0])).toEqual([4, 4, 2]);
    expect(t.evalSet({ count: 10, batchSize: 4 })).toEqual(set);
    expect(t.evalSet({ count: 10, batchSize: 4, seed: 1 })).not.toEqual(set);
    const lenId = t.vocab.id("<len_4>");
    for (const b of set)
      for (let r = 0; r < b.shape[0]; r++) expect(b.tokens[r * t.seqLen + 1]).toBe(lenId);
    // A perfect predictor copies the targets; then corrupt one answer.
    const b0 = set[0]!;
    const V = t.vocabSize;
    const logits = new Float32Array(b0.tokens.length * V);
    b0.targets.forEach((y, i) => {
      logits[i * V + (y === IGNORE_INDEX ? 0 : y)] = 1;
    });
    const pred = argmaxLogits(logits, V);
    expect(t.score(b0, pred)).toEqual({ correct: 4, total: 4, accuracy: 1 });
    const ansIdx = b0.targets.findIndex((y) => y !== IGNORE_INDEX);
    pred[ansIdx] = (pred[ansIdx]! + 1) % 23;
    expect(t.score(b0, pred)).toEqual({ correct: 3, total: 4, accuracy: 0.75 });
  });

  it("rejects bad configuration and arguments", () => {
    expect(() => mano({ maxOps: 0 })).toThrow(/maxOps must be an integer ≥ 1, got 0/);
    expect(() => mano({ maxOps: 2.5 })).toThrow(/maxOps/);
    const t = mano({ maxOps: 3 });
    expect(() => t.trainBatch(t.startCursor(0), 0)).toThrow(/batchSize/);
    expect(() => t.trainBatch({ seed: -1, position: 0 }, 2)).toThrow(/cursor/);
    expect(() => t.sample(new Rng(0), 4)).toThrow(/ops must be an integer in \[0, 3\]/);
    expect(() => t.score(t.evalSet({ count: 1, batchSize: 1 })[0]!, new Int32Array(3))).toThrow(
      /predicted/,
    );
  });
});
