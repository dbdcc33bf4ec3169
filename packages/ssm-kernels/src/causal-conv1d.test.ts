import { gradcheck, Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { causalConv1d, causalConv1dState } from "./causal-conv1d.js";
import { relErr } from "./helpers.test-util.js";

/** Direct transcription of docs/model.md §3.2 with an optional initial state. */
function naive(
  x: Tensor,
  w: Float32Array,
  bias: Float32Array,
  init: Float32Array | null,
  K: number,
): Float32Array {
  const [B, T, C] = x.shape as [number, number, number];
  const y = new Float32Array(B * T * C);
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let c = 0; c < C; c++) {
        let v = bias[c]!;
        for (let k = 0; k < K; k++) {
          const tau = t - K + 1 + k;
          let inp = 0;
          if (tau >= 0) inp = x.data[(b * T + tau) * C + c]!;
          else if (init) inp = init[(b * C + c) * (K - 1) + K - 1 + tau]!;
          v += w[c * K + k]! * inp;
        }
        y[(b * T + t) * C + c] = v;
      }
  return y;
}

// The golden case (testdata/golden/kernels) runs in node/kernel-golden.test.ts, on the portable
// and on the native kernels.
describe("causalConv1d", () => {
  it("matches the formula, with and without an initial state", () => {
    const x = randn([2, 6, 5], 1);
    const w = randn([5, 1, 4], 2);
    const bias = randn([5], 3);
    const init = randn([2, 5, 3], 4);
    expect(
      relErr(causalConv1d(x, w, bias).data, naive(x, w.data, bias.data, null, 4)),
    ).toBeLessThan(1e-6);
    const y = causalConv1d(x, w, bias, init);
    expect(relErr(y.data, naive(x, w.data, bias.data, init.data, 4))).toBeLessThan(1e-6);
  });

  it("continues exactly from the state it hands over (split sequence = whole sequence)", () => {
    const x = randn([2, 9, 5], 5);
    const w = randn([5, 1, 4], 6);
    const bias = randn([5], 7);
    const whole = causalConv1d(x, w, bias).data;
    for (const cut of [1, 2, 5]) {
      const a = new Tensor(x.data.slice(0, 2 * 9 * 5), [2, 9, 5]);
      // first part: rows [0, cut) of each batch entry
      const first = new Float32Array(2 * cut * 5);
      const rest = new Float32Array(2 * (9 - cut) * 5);
      for (let b = 0; b < 2; b++) {
        first.set(a.data.subarray(b * 45, b * 45 + cut * 5), b * cut * 5);
        rest.set(a.data.subarray(b * 45 + cut * 5, (b + 1) * 45), b * (9 - cut) * 5);
      }
      const shape1 = { batch: 2, seqLen: cut, channels: 5, width: 4 };
      const st = causalConv1dState(shape1, first, null);
      const y2 = causalConv1d(
        new Tensor(rest, [2, 9 - cut, 5]),
        w,
        bias,
        new Tensor(st, [2, 5, 3]),
      );
      for (let b = 0; b < 2; b++) {
        const want = whole.subarray(b * 45 + cut * 5, (b + 1) * 45);
        const got = y2.data.subarray(b * (9 - cut) * 5, (b + 1) * (9 - cut) * 5);
        expect(relErr(got, want)).toBeLessThan(1e-6);
      }
    }
  });

  it("gradcheck: x, weight, bias, initial state", () => {
    const x = randn([2, 5, 3], 11);
    const w = randn([3, 1, 3], 12);
    const bias = randn([3], 13);
    const init = randn([2, 3, 2], 14);
    gradcheck(() => causalConv1d(x, w, bias, init), [x, w, bias, init]);
  });

  it("rejects bad shapes with the expected shape in the message", () => {
    const x = randn([1, 4, 3], 1);
    expect(() => causalConv1d(x, randn([4, 1, 2], 2), null)).toThrow(/weight must be \[3,1,K\]/);
    expect(() => causalConv1d(x, randn([3, 1, 2], 2), randn([2], 3))).toThrow(/bias must be \[3\]/);
    expect(() => causalConv1d(x, randn([3, 1, 2], 2), null, randn([1, 3, 2], 4))).toThrow(
      /initial state must be \[1,3,1\]/,
    );
  });
});
