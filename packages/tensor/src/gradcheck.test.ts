import { describe, expect, it } from "vitest";
import { record1 } from "./autograd/node.js";
import { gradcheck } from "./gradcheck.js";
import { Tensor, tensor } from "./tensor.js";

/**
 * y = Σ c_i·x_i (one output), so ∂f/∂x_i = c_i·dy. `wrong` lists entries whose backward is
 * sabotaged: "sign" flips the entry's gradient, "zero" drops it.
 */
function weightedSum(x: Tensor, c: readonly number[], wrong: Record<number, "sign" | "zero"> = {}) {
  let s = 0;
  for (let i = 0; i < x.size; i++) s += c[i]! * x.data[i]!;
  return record1("weightedSum", [x], Float32Array.of(s), [1], ([g]) => {
    const gx = new Float32Array(x.size);
    for (let i = 0; i < x.size; i++) {
      const v = c[i]! * g![0]!;
      gx[i] = wrong[i] === "sign" ? -v : wrong[i] === "zero" ? 0 : v;
    }
    return [gx];
  });
}

describe("gradcheck", () => {
  const c = [10, -6, 3, 0.05, 5, -8, 2, 7];
  const x = () => tensor([0.3, -1.2, 0.7, 0.05, -0.4, 1.1, -2, 0.9], [8], true);

  it("passes a correct gradient, checking every entry of a small tensor", () => {
    const x0 = x();
    for (const seed of [1, 2, 3]) {
      const r = gradcheck(() => weightedSum(x0, c), [x0], { seed });
      expect(r.checked).toBe(8);
      expect(r.worstRatio).toBeLessThanOrEqual(1);
    }
  });

  it("fails a gradient whose sign is wrong on an entry 0.5 % of the largest", () => {
    // Relative to the largest entry (10·|dy|) the error 0.1·|dy| is 1 %, which a check scaled by
    // the tensor's largest gradient with tolerance 2e-2 let through; per entry it is 200 %.
    for (const seed of [1, 2, 3, 4, 5]) {
      const t = x();
      expect(() => gradcheck(() => weightedSum(t, c, { 3: "sign" }), [t], { seed })).toThrow(
        /1 of 8 entries outside.*\n {2}input 0 entry 3: analytic/,
      );
    }
  });

  it("fails a dropped gradient on any entry of a tensor below the sampling threshold", () => {
    const n = 100;
    // entry 97's gradient is 0.7 % of the largest: a check scaled by the largest let its loss
    // through, and one sampling 64 of the 100 entries could miss it
    const cs = Array.from({ length: n }, (_, i) => (i === 97 ? 0.05 : 1 + (i % 7)));
    const t = new Tensor(
      Float32Array.from({ length: n }, (_, i) => Math.sin(i)),
      [n],
      true,
    );
    expect(() => gradcheck(() => weightedSum(t, cs, { 97: "zero" }), [t])).toThrow(
      /1 of 100 entries outside.*\n {2}input 0 entry 97:/,
    );
  });

  it("fails a NaN gradient", () => {
    const t = x();
    const nanGrad = () =>
      record1("nan", [t], Float32Array.of(t.data[0]!), [1], () => [
        new Float32Array(8).fill(Number.NaN),
      ]);
    expect(() => gradcheck(nanGrad, [t])).toThrow(/8 of 8 entries outside/);
  });

  it("samples maxPerInput entries of a larger tensor", () => {
    const n = 300;
    const cs = Array.from({ length: n }, (_, i) => (i % 5) - 2);
    const t = new Tensor(new Float32Array(n).fill(0.5), [n], true);
    expect(gradcheck(() => weightedSum(t, cs), [t], { maxPerInput: 40 }).checked).toBe(40);
  });
});
