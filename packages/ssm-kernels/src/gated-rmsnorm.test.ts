import { gradcheck } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { gatedRmsnorm } from "./gated-rmsnorm.js";
import { relErr } from "./helpers.test-util.js";

// The golden case (testdata/golden/kernels) runs in node/kernel-golden.test.ts, on the portable
// and on the native kernels.
describe("gatedRmsnorm", () => {
  it("normalises each group separately (formula check)", () => {
    const x = randn([3, 8], 1);
    const z = randn([3, 8], 2);
    const w = randn([8], 3);
    const y = gatedRmsnorm(x, z, w, 2, 1e-5);
    const want = new Float32Array(24);
    for (let r = 0; r < 3; r++)
      for (let g = 0; g < 2; g++) {
        const v: number[] = [];
        for (let j = 0; j < 4; j++) {
          const i = r * 8 + g * 4 + j;
          const zv = z.data[i]!;
          v.push(x.data[i]! * (zv / (1 + Math.exp(-zv))));
        }
        const rms = Math.sqrt(v.reduce((s, a) => s + a * a, 0) / 4 + 1e-5);
        v.forEach((a, j) => {
          want[r * 8 + g * 4 + j] = (a / rms) * w.data[g * 4 + j]!;
        });
      }
    expect(relErr(y.data, want)).toBeLessThan(1e-6);
  });

  for (const G of [1, 2, 4]) {
    it(`gradcheck x, z, weight (G=${G})`, () => {
      const x = randn([2, 3, 8], 10 + G);
      const z = randn([2, 3, 8], 20 + G);
      const w = randn([8], 30 + G);
      gradcheck(() => gatedRmsnorm(x, z, w, G, 1e-5), [x, z, w]);
    });
  }

  it("rejects a group count that does not divide the channels", () => {
    expect(() => gatedRmsnorm(randn([2, 6], 1), randn([2, 6], 2), randn([6], 3), 4)).toThrow(
      /nGroups must be a positive divisor of the channel count 6, got 4/,
    );
  });
});
