import { add, gradcheck, mul, randn } from "@loop/tensor";
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
