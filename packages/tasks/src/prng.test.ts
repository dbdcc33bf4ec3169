import { describe, expect, it } from "vitest";
import { deriveSeed, Prng } from "./prng.js";
import { chiSquareUniform } from "./testing/chi-square.js";

describe("Prng", () => {
  it("matches the xoshiro128** reference stream from state {1, 2, 3, 4}", () => {
    const r = Prng.fromState({ s: [1, 2, 3, 4] });
    const got = Array.from({ length: 4 }, () => r.nextU32());
    expect(got).toEqual([11520, 0, 5927040, 70819200]);
  });

  it("is a pure function of the seed and restores from its state", () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const xs = Array.from({ length: 100 }, () => a.nextU32());
    expect(Array.from({ length: 100 }, () => b.nextU32())).toEqual(xs);
    const st = a.getState();
    const c = Prng.fromState(JSON.parse(JSON.stringify(st)));
    expect(c.nextU32()).toBe(a.nextU32());
    expect(new Prng(43).nextU32()).not.toBe(new Prng(42).nextU32());
  });

  it("draws integers uniformly and in range", () => {
    const r = new Prng(7);
    const counts = new Array(23).fill(0);
    let outOfRange = 0;
    for (let i = 0; i < 46_000; i++) {
      const v = r.int(23);
      if (!(v >= 0 && v < 23)) outOfRange++;
      else counts[v]++;
    }
    expect(outOfRange).toBe(0);
    const { stat, critical } = chiSquareUniform(counts);
    expect(stat).toBeLessThan(critical);
  });

  it("shuffles to a permutation", () => {
    const a = Array.from({ length: 50 }, (_, i) => i);
    new Prng(1).shuffle(a);
    expect([...a].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(a).not.toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it("derives distinct seeds from parts and rejects bad input", () => {
    const s = new Set([
      deriveSeed(1, "a", 0),
      deriveSeed(1, "a", 1),
      deriveSeed(1, "b", 0),
      deriveSeed(2, "a", 0),
      deriveSeed(1, 0, "a"),
    ]);
    expect(s.size).toBe(5);
    expect(deriveSeed(1, "a", 0)).toBe(deriveSeed(1, "a", 0));
    expect(() => new Prng(-1)).toThrow(/seed/);
    expect(() => new Prng(1.5)).toThrow(/seed/);
    expect(() => deriveSeed(1, -3)).toThrow(/non-negative/);
    expect(() => new Prng(1).int(0)).toThrow(/n must be/);
  });
});
