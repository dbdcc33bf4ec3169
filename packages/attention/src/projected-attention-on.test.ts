/*
 * Projected attention composed over kernels (projected-attention-on.ts) on the CPU's kernels,
 * without the CPU's fused op, against that fused op: values and gradients, GQA, packed
 * documents and a position offset.
 */
import { backward, cpuTensorOps, cpuTransferOps, IntTensor, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { cpuAttentionOps } from "./cpu-attention-ops.js";
import { projectedAttentionOn } from "./projected-attention-on.js";

const fused = { ...cpuTransferOps, ...cpuTensorOps, ...cpuAttentionOps };
const { projectedAttention: _, ...kernels } = fused;

function leaf(shape: number[], seed: number): Tensor {
  const t = randn(shape, seed, { std: 0.5 });
  t.requiresGrad = true;
  return t;
}

function grads(out: Tensor, inputs: readonly Tensor[]): Float32Array[] {
  for (const t of inputs) t.grad = null;
  backward(out, [Float32Array.from({ length: out.size }, (_, i) => Math.sin(i))]);
  return inputs.map((t) => Float32Array.from(t.grad!));
}

describe("projectedAttentionOn = the CPU's fused projectedAttention", () => {
  const cases = [
    { name: "MHA", Hq: 2, Hkv: 2, seq: null as Int32Array | null, offset: 0 },
    {
      name: "GQA, packed documents",
      Hq: 4,
      Hkv: 2,
      seq: Int32Array.of(0, 0, 0, 1, 1, 2, 0, 0, 1, 1, 1, 1),
      offset: 0,
    },
    { name: "GQA, position offset", Hq: 4, Hkv: 1, seq: null, offset: 7 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const [B, T, D, hd] = [2, 6, 16, 4];
      const u = leaf([B, T, D], 1);
      const wq = leaf([c.Hq * hd, D], 2);
      const wk = leaf([c.Hkv * hd, D], 3);
      const wv = leaf([c.Hkv * hd, D], 4);
      const inputs = [u, wq, wk, wv];
      const opts = {
        nHeads: c.Hq,
        nKvHeads: c.Hkv,
        rope: { theta: 500, offset: c.offset },
        seqIdx: c.seq ? new IntTensor(c.seq, [B * T]) : null,
      };
      const want = projectedAttentionOn(fused, u, wq, wk, wv, opts);
      const wantGrads = grads(want, inputs);
      const got = projectedAttentionOn(kernels, u, wq, wk, wv, opts);
      expect(got.shape).toEqual([B, T, c.Hq * hd]);
      for (let i = 0; i < want.size; i++) expect(got.data[i]).toBeCloseTo(want.data[i]!, 5);
      grads(got, inputs).forEach((g, k) => {
        for (let i = 0; i < g.length; i++) expect(g[i]).toBeCloseTo(wantGrads[k]![i]!, 4);
      });
    });
  }
});
