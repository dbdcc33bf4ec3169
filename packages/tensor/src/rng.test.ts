import { describe, expect, it } from "vitest";
import { Rng } from "./rng.js";

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
});
