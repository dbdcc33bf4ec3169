import { describe, expect, it } from "vitest";
import { backward } from "./autograd/backward.js";
import { linear } from "./ops/matmul.js";
import { sum } from "./ops/reduce.js";
import { silu } from "./ops/unary.js";
import { randn } from "./random-tensor.js";
import { releaseScratch, scratchBytes, withScratch, withTemporaries } from "./scratch.js";
import { allocF32, allocF32Uninit } from "./tensor.js";

describe("scratch pool", () => {
  it("hands out zeroed buffers and reuses them across scopes", () => {
    releaseScratch();
    const first = withScratch(() => {
      const a = allocF32(5000);
      a.fill(7);
      return a.buffer;
    });
    const bytes = scratchBytes();
    expect(bytes).toBe(8192 * 4);
    withScratch(() => {
      const b = allocF32(6000);
      expect(b.buffer).toBe(first);
      expect(b.every((v) => v === 0)).toBe(true);
      expect(b.length).toBe(6000);
      const c = allocF32(6000);
      expect(c.buffer).not.toBe(first);
    });
    expect(scratchBytes()).toBe(2 * 8192 * 4);
    expect(allocF32(5000).buffer).not.toBe(first);
  });
  it("gives the same gradients inside and outside a scope", () => {
    const w = randn([64, 64], 1);
    const x = randn([32, 64], 2, { requiresGrad: false });
    const run = () => {
      w.grad = null;
      const l = sum(silu(linear(x, w)));
      backward(l);
      return { loss: l.item(), g: Array.from(w.grad!) };
    };
    const plain = run();
    const a = withScratch(run);
    const b = withScratch(run);
    expect(a).toEqual(plain);
    expect(b).toEqual(plain);
  });
  it("allocF32Uninit reuses pooled memory as is; allocF32 still hands out zeros", () => {
    withScratch(() => {
      allocF32Uninit(4096).fill(7);
    });
    withScratch(() => {
      const a = allocF32Uninit(4096);
      expect(a.length).toBe(4096);
      expect(a[0]).toBe(7); // the same pooled buffer, not cleared
    });
    withScratch(() => {
      allocF32Uninit(4096).fill(7);
    });
    withScratch(() => {
      expect(allocF32(4096).every((v) => v === 0)).toBe(true);
    });
  });
  it("withTemporaries returns its buffers at once, inside a step's scope or outside any", () => {
    releaseScratch();
    withScratch(() => {
      const kept = allocF32(3000); // the step's: stays taken until the step ends
      const t1 = withTemporaries(() => allocF32(3000).buffer);
      const t2 = withTemporaries(() => {
        const t = allocF32(3000);
        expect(t.every((v) => v === 0)).toBe(true);
        t.fill(1);
        return t.buffer;
      });
      expect(t2).toBe(t1); // the first temporary went back to the pool
      expect(kept.buffer).not.toBe(t1);
    });
    const pooled = scratchBytes();
    expect(pooled).toBe(2 * 4096 * 4);
    // outside any step: still from the pool (no new buffer), and returned again
    withTemporaries(() => allocF32Uninit(3000));
    withTemporaries(() => allocF32Uninit(3000));
    expect(scratchBytes()).toBe(pooled);
    expect(() => releaseScratch()).not.toThrow();
    expect(scratchBytes()).toBe(0);
  });
});
