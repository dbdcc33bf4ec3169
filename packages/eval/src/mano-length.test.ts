import { evaluatePrefix, MANO_DEFAULT_EVAL_SEED, ManoTask } from "@loop/tasks";
import { deriveSeed, IGNORE_INDEX, Rng } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { evaluateAccuracy } from "./accuracy.js";
import { tableModel, tinyLoopedModel } from "./helpers.test-util.js";
import { evaluateManoByLength, manoLengthBatches } from "./mano-length.js";

const task = new ManoTask({ maxOps: 2 }); // 32 symbols
const V = task.vocabSize;
const sym = (id: number) => task.vocab.symbol(id);

/**
 * A stand-in whose loop step r predicts, at every position, the true value of the row's
 * expression (read from its tokens with the task's own evaluator) when the row has at most
 * `rightUpTo(r)` operators, and a wrong value otherwise.
 */
function oracle(R: number, rightUpTo: (r: number) => number) {
  return tableModel(R, V, (r, tokens, B, T) => {
    const out = new Float32Array(B * T * V);
    for (let b = 0; b < B; b++) {
      const row = Array.from(tokens.subarray(b * T, (b + 1) * T), sym);
      const ops = Number(/^<len_(\d+)>$/.exec(row[1]!)![1]);
      const value = evaluatePrefix(row.slice(2, 2 + 2 * ops + 1));
      const said = ops <= rightUpTo(r) ? value : (value + 1) % 23;
      for (let t = 0; t < T; t++) out[(b * T + t) * V + task.vocab.id(String(said))] = 1;
    }
    return out;
  });
}

/** The pilots' script of docs/results/pilots.md, verbatim. */
async function pilotScript(model: Parameters<typeof evaluateAccuracy>[0], count: number) {
  const out: Record<number, number[]> = {};
  for (let ops = 1; ops <= task.maxOps; ops++) {
    const batches = [];
    for (let start = 0; start < count; start += 64) {
      const ex = [];
      for (let i = start; i < Math.min(count, start + 64); i++)
        ex.push(
          task.sample(new Rng(deriveSeed(0x6d616e6f, "mano/eval-len", ops * 1_000_000 + i)), ops),
        );
      batches.push(task.toBatch(ex));
    }
    const r = await evaluateAccuracy(model, batches, { score: (b, p) => task.score(b, p) });
    out[ops] = r.steps.map((s) => s.accuracy);
  }
  return out;
}

describe("manoLengthBatches", () => {
  it("holds `count` expressions of exactly ℓ operators, answer at the <ans> position", () => {
    for (const ops of [1, 2]) {
      const batches = manoLengthBatches(task, ops, { count: 10, batchSize: 4 });
      expect(batches.map((b) => b.shape[0])).toEqual([4, 4, 2]);
      for (const b of batches) {
        const T = b.shape[1];
        expect(T).toBe(task.seqLen);
        for (let row = 0; row < b.shape[0]; row++) {
          const syms = Array.from(b.tokens.subarray(row * T, (row + 1) * T), sym);
          expect(syms[1]).toBe(`<len_${ops}>`);
          const expr = syms.slice(2, 2 + 2 * ops + 1);
          expect(expr.filter((s) => s === "+" || s === "-" || s === "*")).toHaveLength(ops);
          expect(syms[2 + 2 * ops + 1]).toBe("<ans>");
          const scored = [...b.targets.subarray(row * T, (row + 1) * T)]
            .map((t, i) => [t, i])
            .filter(([t]) => t !== IGNORE_INDEX);
          expect(scored).toEqual([[task.vocab.id(String(evaluatePrefix(expr))), 2 * ops + 3]]);
        }
      }
    }
  });

  it("is the same stream at any batch size, and another seed draws other expressions", () => {
    const rows = (bs: number, seed?: number) =>
      manoLengthBatches(task, 2, { count: 9, batchSize: bs, seed }).flatMap((b) => [...b.tokens]);
    expect(rows(2)).toEqual(rows(64));
    expect(rows(64, MANO_DEFAULT_EVAL_SEED)).toEqual(rows(64));
    expect(rows(64, 7)).not.toEqual(rows(64));
  });

  it("is not the fixed evaluation set at ℓ = L", () => {
    const fixed = task.evalSet({ count: 16, batchSize: 16 })[0]!.tokens;
    const own = manoLengthBatches(task, 2, { count: 16 })[0]!.tokens;
    expect([...own]).not.toEqual([...fixed]);
  });

  it("refuses a count outside 1..10⁶ and a length outside 1..L", () => {
    expect(() => manoLengthBatches(task, 1, { count: 0 })).toThrow(
      /count must be an integer in \[1, 1000000\], got 0/,
    );
    expect(() => manoLengthBatches(task, 1, { count: 1_000_001 })).toThrow(/count/);
    expect(() => manoLengthBatches(task, 3, { count: 1 })).toThrow(/ops must be .*\[1, 2\]/);
  });
});

describe("evaluateManoByLength", () => {
  it("a model that is always right scores 100 % at every ℓ and step", async () => {
    const r = await evaluateManoByLength(
      oracle(2, () => 2),
      task,
      { count: 20, batchSize: 8 },
    );
    expect(r.count).toBe(20);
    expect(r.seed).toBe(MANO_DEFAULT_EVAL_SEED);
    expect(r.lengths.map((l) => l.ops)).toEqual([1, 2]);
    for (const l of r.lengths) {
      expect(l.steps.map((s) => s.accuracy)).toEqual([1, 1]);
      expect(l.steps.map((s) => s.total)).toEqual([20, 20]);
    }
  });

  it("keeps each length's score apart and each loop step's", async () => {
    // step 1 right only at ℓ = 1, step 2 at both
    const r = await evaluateManoByLength(
      oracle(2, (step) => step),
      task,
      { count: 12 },
    );
    expect(r.lengths.map((l) => l.steps.map((s) => s.accuracy))).toEqual([
      [1, 1],
      [0, 1],
    ]);
  });

  it("on a real looped model: deterministic, batch-size free, the pilots' script's numbers", async () => {
    const model = tinyLoopedModel({ loops: 3, seed: 5 });
    const a = await evaluateManoByLength(model, task, { count: 70 });
    const b = await evaluateManoByLength(model, task, { count: 70, batchSize: 9 });
    expect(b).toEqual(a);
    const script = await pilotScript(model, 70);
    expect(a.lengths.map((l) => l.steps.map((s) => s.accuracy))).toEqual([script[1], script[2]]);
    expect(a.lengths.every((l) => l.steps.length === 3)).toBe(true);
  });
});
