import { backward, gradcheck, linear, reshape, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { attention } from "./attention.js";
import { projectedAttention } from "./projected-attention.js";
import { rope } from "./rope.js";

// The native path (one GEMM, RoPE in place, kernels on column blocks) is compared with these
// ops in node/native-attention.test.ts; here the portable path, which is those ops.
describe("projectedAttention (portable kernels)", () => {
  const [B, T, D, Hq, Hkv, hd] = [2, 7, 12, 4, 2, 6];
  const make = () => ({
    u: randn([B, T, D], 1),
    wq: randn([Hq * hd, D], 2),
    wk: randn([Hkv * hd, D], 3),
    wv: randn([Hkv * hd, D], 4),
  });
  const opts = { theta: 100, offset: 3 };

  it("equals linear, rope and attention, values and gradients", () => {
    const gy = randn([B, T, Hq * hd], 5).data;
    const run = (f: (t: ReturnType<typeof make>) => Tensor) => {
      const t = make();
      const y = f(t);
      backward([y], [gy]);
      return [y.data, t.u.grad!, t.wq.grad!, t.wk.grad!, t.wv.grad!];
    };
    const fused = run((t) =>
      projectedAttention(t.u, t.wq, t.wk, t.wv, { nHeads: Hq, nKvHeads: Hkv, rope: opts }),
    );
    const apart = run((t) =>
      reshape(
        attention(
          rope(reshape(linear(t.u, t.wq), [B, T, Hq, hd]), opts),
          rope(reshape(linear(t.u, t.wk), [B, T, Hkv, hd]), opts),
          reshape(linear(t.u, t.wv), [B, T, Hkv, hd]),
        ),
        [B, T, Hq * hd],
      ),
    );
    for (const [i, a] of fused.entries())
      expect(Array.from(a), `output ${i}`).toEqual(Array.from(apart[i]!));
  });

  it("gradient (finite differences)", () => {
    const t = make();
    gradcheck(
      () => projectedAttention(t.u, t.wq, t.wk, t.wv, { nHeads: Hq, nKvHeads: Hkv, rope: opts }),
      [t.u, t.wq, t.wk, t.wv],
      { maxPerInput: 16 },
    );
  });

  it("rejects shapes and head counts that do not fit, naming them", () => {
    const t = make();
    const o = { nHeads: Hq, nKvHeads: Hkv };
    expect(() => projectedAttention(randn([B, D], 1), t.wq, t.wk, t.wv, o)).toThrow(
      /u must be \[B, T, D\], got \[2,12\]/,
    );
    expect(() => projectedAttention(t.u, t.wq, t.wk, t.wv, { nHeads: 4, nKvHeads: 3 })).toThrow(
      /nHeads=4.*nKvHeads=3/,
    );
    expect(() => projectedAttention(t.u, t.wq, t.wk, t.wv, { nHeads: 2.5, nKvHeads: 1 })).toThrow(
      /nHeads=2.5/,
    );
    expect(() => projectedAttention(t.u, t.wq, randn([Hkv * hd, D + 1], 6), t.wv, o)).toThrow(
      /k_proj must be \[12, 12\], got \[12,13\]/,
    );
    expect(() => projectedAttention(t.u, t.wq, t.wk, randn([hd, D], 7), o)).toThrow(
      /v_proj must be \[12, 12\]/,
    );
  });
});
