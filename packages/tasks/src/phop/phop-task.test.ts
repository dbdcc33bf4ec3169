import { describe, expect, it } from "vitest";
import { IGNORE_INDEX } from "../task.js";
import { chiSquareUniform } from "../testing/chi-square.test-util.js";
import { alphabetSymbols } from "./hops.js";
import { pHop } from "./phop-task.js";

/** Brute-force hop follower, literally docs/tasks.md's find_1 (1-based positions). */
function bruteAnswer(v: string[], p: number): string | undefined {
  const at = (k: number) => v[k - 1];
  let i = v.length;
  for (let h = 0; h < p; h++) {
    let next = 0;
    for (let k = i; k >= 2; k--)
      if (at(k - 1) === at(i)) {
        next = k;
        break;
      }
    if (next === 0) return undefined;
    i = next;
  }
  return at(i);
}

describe("pHop", () => {
  it("names symbols in alphabet order", () => {
    expect(alphabetSymbols(4)).toEqual(["a", "b", "c", "d"]);
    const s = alphabetSymbols(30);
    expect(s.slice(24)).toEqual(["y", "z", "aa", "ab", "ac", "ad"]);
    expect(new Set(s).size).toBe(30);
    expect(pHop({ alphabet: 3, length: 8, hops: 2 }).vocab.symbols).toEqual(["a", "b", "c"]);
  });

  it("samples answers that a brute-force hop follower confirms, with no immediate repeats", () => {
    const configs = [
      { alphabet: 4, length: 256, hops: 16 },
      { alphabet: 4, length: 256, hops: 32 },
      { alphabet: 2, length: 10, hops: 8 },
      { alphabet: 3, length: 1024, hops: 64 },
      { alphabet: 26, length: 64, hops: 3 },
      { alphabet: 5, length: 7, hops: 1 },
    ];
    for (const cfg of configs) {
      const t = pHop(cfg);
      const n = cfg.length > 500 ? 20 : 100;
      for (let i = 0; i < n; i++) {
        const ex = t.trainExample(21, i);
        expect(ex.input.length).toBe(cfg.length);
        expect(ex.hops).toBe(cfg.hops);
        expect(ex.input.filter((s, k) => k > 0 && s === ex.input[k - 1])).toEqual([]);
        expect(bruteAnswer(ex.input, cfg.hops)).toBe(ex.answer);
      }
    }
  });

  it("draws the first token uniformly and transitions uniformly over the other symbols", () => {
    const A = 4;
    const t = pHop({ alphabet: A, length: 64, hops: 4 });
    const first = new Array(A).fill(0);
    const pairs = new Array(A * A).fill(0);
    for (let i = 0; i < 2000; i++) {
      const ids = t.vocab.encode(t.trainExample(2, i).input);
      first[ids[0]!]++;
      for (let k = 1; k < ids.length; k++) pairs[ids[k - 1]! * A + ids[k]!]++;
    }
    const offDiagonal = pairs.filter((_, j) => Math.floor(j / A) !== j % A);
    for (const counts of [first, offDiagonal]) {
      const { stat, critical } = chiSquareUniform(counts);
      expect(stat).toBeLessThan(critical);
    }
  });

  it("is deterministic and resumes from a cursor", () => {
    const t = pHop({ alphabet: 4, length: 32, hops: 3 });
    const dump = (s: number) =>
      JSON.stringify(Array.from({ length: 30 }, (_, i) => t.trainExample(s, i)));
    expect(dump(5)).toBe(dump(5));
    expect(dump(6)).not.toBe(dump(5));
    const whole = t.trainBatch(t.startCursor(5), 9).batch;
    const a = t.trainBatch(t.startCursor(5), 4);
    const b = t.trainBatch(a.cursor, 5).batch;
    expect([...a.batch.tokens, ...b.tokens]).toEqual([...whole.tokens]);
    expect([...a.batch.targets, ...b.targets]).toEqual([...whole.targets]);
  });

  it("puts the only target, the answer, at the last position", () => {
    const t = pHop({ alphabet: 4, length: 40, hops: 5 });
    const { batch } = t.trainBatch(t.startCursor(3), 6);
    expect(batch.shape).toEqual([6, 40]);
    for (let b = 0; b < 6; b++) {
      const ex = t.trainExample(3, b);
      expect(t.vocab.decode(batch.tokens.subarray(b * 40, b * 40 + 40))).toEqual(ex.input);
      for (let k = 0; k < 40; k++)
        expect(batch.targets[b * 40 + k]).toBe(k === 39 ? t.vocab.id(ex.answer) : IGNORE_INDEX);
    }
    const set = t.evalSet({ count: 5, batchSize: 2 });
    expect(set.map((x) => x.shape)).toEqual([
      [2, 40],
      [2, 40],
      [1, 40],
    ]);
    expect(t.evalSet({ count: 5, batchSize: 2 })).toEqual(set);
    const pred = set[2]!.targets.map((y) => (y === IGNORE_INDEX ? 0 : y));
    expect(t.score(set[2]!, pred).accuracy).toBe(1);
  });

  it("reports configurations that cannot produce examples", () => {
    expect(() => pHop({ alphabet: 1 })).toThrow(/alphabet must be an integer ≥ 2, got 1/);
    expect(() => pHop({ hops: 0 })).toThrow(/hops must be an integer ≥ 1, got 0/);
    expect(() => pHop({ length: 17, hops: 16 })).toThrow(
      /length must be ≥ hops \+ 2 = 18 for a defined 16-hop answer, got 17/,
    );
    const t = pHop({ alphabet: 20, length: 12, hops: 10, maxAttempts: 50 });
    expect(() => t.trainExample(0, 0)).toThrow(
      /no sequence with a defined answer after 50 attempts \(hops 10, length 12, alphabet 20\)/,
    );
  });
});

describe("dense p-hop training targets", () => {
  it("targets every prefix whose answer is defined, checked by brute force; eval stays single-answer", () => {
    const t = pHop({ alphabet: 3, length: 20, hops: 2, dense: true });
    const { batch } = t.trainBatch(t.startCursor(5), 16);
    const follow = (seq: number[], p: number): number => {
      let pos = seq.length;
      for (let h = 0; h < p; h++) {
        let j = 0;
        for (let k = pos - 1; k >= 1; k--)
          if (seq[k - 1] === seq[pos - 1]) {
            j = k;
            break;
          }
        if (j === 0) return -100;
        pos = j + 1;
      }
      return seq[pos - 1]!;
    };
    let dense = 0;
    for (let b = 0; b < 16; b++) {
      const row = Array.from(batch.tokens.subarray(b * 20, b * 20 + 20));
      for (let i = 1; i <= 20; i++) {
        const want = follow(row.slice(0, i), 2);
        expect(batch.targets[b * 20 + i - 1]).toBe(want);
        if (want !== -100) dense++;
      }
    }
    expect(dense).toBeGreaterThan(16 * 5);
    const ev = t.evalSet({ count: 4, batchSize: 4 })[0]!;
    expect(Array.from(ev.targets).filter((x) => x !== -100)).toHaveLength(4);
    expect(t.name).toBe("phop-a3-n20-p2-dense");
  });
});

describe("mixed-difficulty p-hop", () => {
  it("draws each sequence's p from 1..hops, says it in a first token; the answers follow that p (brute force)", () => {
    const t = pHop({ alphabet: 4, length: 24, hops: 4, mixedHops: true });
    expect(t.name).toBe("phop-a4-n24-p1-4");
    expect(t.vocab.symbols).toEqual(["a", "b", "c", "d", "#1", "#2", "#3", "#4"]);
    expect(t.vocabSize).toBe(8);
    const seen = new Map<number, number>();
    for (let i = 0; i < 400; i++) {
      const ex = t.trainExample(9, i);
      expect(ex.hops).toBeGreaterThanOrEqual(1);
      expect(ex.hops).toBeLessThanOrEqual(4);
      expect(ex.input).toHaveLength(24);
      expect(ex.input[0]).toBe(`#${ex.hops}`);
      expect(bruteAnswer(ex.input.slice(1), ex.hops)).toBe(ex.answer);
      seen.set(ex.hops, (seen.get(ex.hops) ?? 0) + 1);
    }
    // uniform over 1..4: every p about 100 times in 400
    for (let p = 1; p <= 4; p++) expect(seen.get(p)).toBeGreaterThan(60);
    // the batch carries the same rows and answers as the examples
    const { batch } = t.trainBatch(t.startCursor(9), 8);
    for (let b = 0; b < 8; b++) {
      const ex = t.trainExample(9, b);
      expect(t.vocab.decode(batch.tokens.subarray(b * 24, b * 24 + 24))).toEqual(ex.input);
      expect(batch.targets[b * 24 + 23]).toBe(t.vocab.id(ex.answer));
    }
  });

  it("leaves the fixed-p stream as it was (no draw of p)", () => {
    const fixed = pHop({ alphabet: 4, length: 24, hops: 3 });
    const off = pHop({ alphabet: 4, length: 24, hops: 3, mixedHops: false });
    expect(off.name).toBe(fixed.name);
    expect(off.trainBatch(off.startCursor(4), 5)).toEqual(
      fixed.trainBatch(fixed.startCursor(4), 5),
    );
    expect(fixed.evalHops(6)).toEqual(Int32Array.from([3, 3, 3, 3, 3, 3]));
  });

  it("splits the eval set by p: every row once, under its own p, batched alike", () => {
    const t = pHop({ alphabet: 4, length: 24, hops: 3, mixedHops: true });
    const opts = { count: 50, batchSize: 8 };
    const rowsOf = (bs: { tokens: Int32Array; targets: Int32Array }[]) =>
      bs.flatMap((b) =>
        Array.from({ length: b.tokens.length / 24 }, (_, r) =>
          JSON.stringify([
            Array.from(b.tokens.subarray(r * 24, r * 24 + 24)),
            b.targets[r * 24 + 23],
          ]),
        ),
      );
    const all = rowsOf(t.evalSet(opts));
    const hops = t.evalHops(50);
    let total = 0;
    for (let p = 1; p <= 3; p++) {
      const part = t.evalSetOfHops(opts, p);
      expect(part.every((b) => b.shape[0] <= 8)).toBe(true);
      const got = rowsOf(part);
      const want = all.filter((_, i) => hops[i] === p);
      expect(got).toEqual(want);
      for (const line of got) {
        const [ids, answer] = JSON.parse(line) as [number[], number];
        const row = t.vocab.decode(Int32Array.from(ids));
        expect(row[0]).toBe(`#${p}`);
        expect(bruteAnswer(row.slice(1), p)).toBe(t.vocab.symbol(answer));
      }
      total += got.length;
    }
    expect(total).toBe(50);
    expect(t.evalSetOfHops(opts, 4)).toEqual([]);
  });

  it("dense targets follow each row's own p", () => {
    const t = pHop({ alphabet: 3, length: 16, hops: 3, dense: true, mixedHops: true });
    const { batch } = t.trainBatch(t.startCursor(2), 6);
    for (let b = 0; b < 6; b++) {
      const p = t.trainExample(2, b).hops;
      const row = t.vocab.decode(batch.tokens.subarray(b * 16, b * 16 + 16));
      // the hop-count token carries no target; each later prefix its answer under the row's p
      expect(batch.targets[b * 16]).toBe(IGNORE_INDEX);
      for (let i = 2; i <= 16; i++) {
        const want = bruteAnswer(row.slice(1, i), p);
        const got = batch.targets[b * 16 + i - 1]!;
        expect(got === IGNORE_INDEX ? undefined : t.vocab.symbol(got)).toBe(want);
      }
    }
  });

  it("needs room for the hop-count token", () => {
    expect(() => pHop({ length: 6, hops: 4, mixedHops: true })).toThrow(
      /length must be ≥ hops \+ 3 = 7 for a defined 4-hop answer after the hop-count token, got 6/,
    );
    expect(pHop({ length: 6, hops: 4 }).length).toBe(6);
  });
});
