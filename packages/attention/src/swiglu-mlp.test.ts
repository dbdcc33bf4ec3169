import { gradcheck, noGrad, Rng, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { SwiGluMlp } from "./swiglu-mlp.js";

describe("SwiGluMlp", () => {
  it("has gate/up/down parameters with the documented shapes and init bounds", () => {
    const m = new SwiGluMlp({ dModel: 16, dFf: 36 }, { rng: new Rng(1), nLayers: 9 });
    expect(m.parameters().map((p) => [p.name, [...p.tensor.shape], p.decay])).toEqual([
      ["gate_proj.weight", [36, 16], true],
      ["up_proj.weight", [36, 16], true],
      ["down_proj.weight", [16, 36], true],
    ]);
    const maxAbs = (t: Tensor) => t.data.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
    expect(maxAbs(m.gateProj)).toBeLessThanOrEqual(1 / 4);
    expect(maxAbs(m.downProj)).toBeLessThanOrEqual(1 / 6 / 3);
    expect(maxAbs(m.downProj)).toBeGreaterThan(1 / 6 / 3 / 2);
  });

  it("computes down(silu(gate x) ⊙ up x) for rows of any rank", () => {
    const m = new SwiGluMlp({ dModel: 4, dFf: 6 }, { rng: new Rng(2) });
    const x = randn([2, 3, 4], 3, { requiresGrad: false });
    const y = noGrad(() => m.forward(x));
    expect(y.shape).toEqual([2, 3, 4]);
    const row = 4; // check the second row by hand
    const xr = x.data.subarray(row, row + 4);
    const h = new Array(6).fill(0).map((_, f) => {
      let g = 0;
      let u = 0;
      for (let d = 0; d < 4; d++) {
        g += m.gateProj.data[f * 4 + d]! * xr[d]!;
        u += m.upProj.data[f * 4 + d]! * xr[d]!;
      }
      return (g / (1 + Math.exp(-g))) * u;
    });
    for (let d = 0; d < 4; d++) {
      let want = 0;
      for (let f = 0; f < 6; f++) want += m.downProj.data[d * 6 + f]! * h[f]!;
      expect(y.data[row + d]).toBeCloseTo(want, 5);
    }
    const flat = noGrad(() => m.forward(randn([4], 0, { requiresGrad: false })));
    expect(flat.shape).toEqual([4]);
  });

  it("gradient (finite differences)", () => {
    const m = new SwiGluMlp({ dModel: 6, dFf: 10 }, { rng: new Rng(4) });
    const x = randn([3, 6], 5);
    gradcheck(() => m.forward(x), [x, m.gateProj, m.upProj, m.downProj], { maxPerInput: 24 });
  });

  it("rejects bad sizes and inputs", () => {
    expect(() => new SwiGluMlp({ dModel: 4, dFf: 0 })).toThrow(/dFf.*0/);
    const m = new SwiGluMlp({ dModel: 4, dFf: 8 });
    expect(() => m.forward(randn([2, 5], 1))).toThrow(/\[\.\.\., 4\].*\[2,5\]/);
  });
});
