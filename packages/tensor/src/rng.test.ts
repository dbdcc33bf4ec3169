import { describe, expect, it } from "vitest";
import { deriveSeed, Rng } from "./rng.js";

describe("Rng", () => {
  it("is deterministic and seed-sensitive", () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const c = new Rng(43);
    const xs = Array.from({ length: 5 }, () => a.nextU32());
    expect(Array.from({ length: 5 }, () => b.nextU32())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.nextU32())).not.toEqual(xs);
  });
  it("children are independent of parent consumption and of each other", () => {
    const a = new Rng(7);
    const c1 = a.child("data").uniform();
    a.uniform();
    expect(a.child("data").uniform()).toBe(c1);
    expect(a.child("init").uniform()).not.toBe(c1);
  });
  it("has the right moments and ranges", () => {
    const r = new Rng(1);
    let s = 0;
    let s2 = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const x = r.normal();
      s += x;
      s2 += x * x;
    }
    expect(Math.abs(s / n)).toBeLessThan(0.03);
    expect(Math.abs(s2 / n - 1)).toBeLessThan(0.05);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[r.int(3)]!++;
    for (const c of counts) expect(Math.abs(c - 1000)).toBeLessThan(120);
    for (let i = 0; i < 1000; i++) {
      const u = r.uniform();
      expect(u >= 0 && u < 1).toBe(true);
      const k = r.intIn(-2, 2);
      expect(k >= -2 && k <= 2).toBe(true);
    }
    expect(() => r.int(0)).toThrow(/n must be/);
  });
  it("state round-trips exactly (including the cached normal)", () => {
    const r = new Rng(9);
    r.normal();
    const st = JSON.parse(JSON.stringify(r.getState()));
    const a = [r.normal(), r.uniform(), r.nextU32()];
    const q = Rng.fromState(st);
    expect([q.normal(), q.uniform(), q.nextU32()]).toEqual(a);
  });
  it("matches the xoshiro128** reference stream from state {1, 2, 3, 4}", () => {
    const r = Rng.fromState({ seed: 0, s: [1, 2, 3, 4], spare: null });
    expect(Array.from({ length: 4 }, () => r.nextU32())).toEqual([11520, 0, 5927040, 70819200]);
  });
  it("seeds through splitmix32: the first outputs of seed 42 are fixed", () => {
    // The task streams (mano, phop, lm order) are pure functions of these numbers.
    const r = new Rng(42);
    const got = Array.from({ length: 3 }, () => r.nextU32());
    expect(got).toEqual([2837322924, 544945897, 479756282]);
  });
  it("shuffles arrays and typed arrays to permutations", () => {
    const a = Array.from({ length: 50 }, (_, i) => i);
    new Rng(1).shuffle(a);
    expect([...a].sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(a).not.toEqual(Array.from({ length: 50 }, (_, i) => i));
    const t = new Rng(1).shuffle(Int32Array.from({ length: 50 }, (_, i) => i));
    expect(Array.from(t)).toEqual(a);
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
    expect(() => deriveSeed(-1)).toThrow(/seed/);
    expect(() => deriveSeed(1.5)).toThrow(/seed/);
    expect(() => deriveSeed(1, -3)).toThrow(/non-negative/);
  });
});
