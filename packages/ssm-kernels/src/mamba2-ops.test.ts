import { add, backward, gradcheck, mul } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { addDSkip, softplusBias } from "./mamba2-ops.js";

describe("mixer helper ops", () => {
  it("softplusBias: value and gradcheck", () => {
    const raw = randn([2, 3, 4], 1, { std: 3 });
    const bias = randn([4], 2);
    const y = softplusBias(raw, bias);
    const v = raw.data[5]! + bias.data[1]!;
    expect(y.data[5]).toBeCloseTo(Math.log1p(Math.exp(v)), 5);
    gradcheck(() => softplusBias(raw, bias), [raw, bias]);
  });

  it("softplusBias with a limit: clamped values, gradient zero outside, gradcheck", () => {
    const raw = randn([2, 3, 4], 11, { std: 3 });
    const bias = randn([4], 12);
    const limit = [0.1, 2] as const;
    const free = softplusBias(raw, bias).data;
    const y = softplusBias(raw, bias, limit).data;
    let below = 0;
    let above = 0;
    free.forEach((v, i) => {
      const want = Math.min(Math.max(v, Math.fround(0.1)), 2);
      expect(y[i]).toBe(want);
      if (v < 0.1) below++;
      if (v > 2) above++;
    });
    expect(below).toBeGreaterThan(2);
    expect(above).toBeGreaterThan(2);
    // (no element within the finite-difference step of a limit, where the clamp has a kink)
    gradcheck(() => softplusBias(raw, bias, limit), [raw, bias]);
    const out = softplusBias(raw, bias, limit);
    backward(out);
    free.forEach((v, i) => {
      if (v < 0.1 || v > 2) expect(raw.grad![i]).toBe(0);
      else expect(raw.grad![i]).not.toBe(0);
    });
    // no limit and the default (0, ∞) compute the same bits
    expect(softplusBias(raw, bias, [0, Number.POSITIVE_INFINITY]).data).toEqual(free);
    expect(() => softplusBias(raw, bias, [2, 1])).toThrow(/lo ≤ hi/);
  });

  it("addDSkip: value and gradcheck", () => {
    const y = randn([2, 3, 4, 5], 3);
    const x = randn([2, 3, 4, 5], 4);
    const d = randn([4], 5);
    const out = addDSkip(y, x, d);
    const i = ((1 * 3 + 2) * 4 + 3) * 5 + 1;
    expect(out.data[i]).toBeCloseTo(y.data[i]! + d.data[3]! * x.data[i]!, 6);
    gradcheck(() => addDSkip(y, x, d), [y, x, d]);
  });

  it("addDSkip: the pass-through gradient of y is shared, not copied, and sums correctly", () => {
    // y feeds both addDSkip and the add, and both hand the same incoming array onwards: the
    // engine's copy on write must keep every gradient right.
    const a = randn([2, 3, 4, 5], 6);
    const x = randn([2, 3, 4, 5], 7);
    const d = randn([4], 8);
    const f = () => {
      const y = mul(a, a);
      return mul(add(addDSkip(y, x, d), y), x);
    };
    gradcheck(f, [a, x, d]);
  });
});
