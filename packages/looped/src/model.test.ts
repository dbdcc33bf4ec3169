import { backward, gradcheck, intTensor, noGrad, type Tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import type { Checkpointing } from "./checkpointing.js";
import { parseConfig } from "./config.js";
import { decodeStep, initDecodeState } from "./decode.js";
import { generate } from "./generate.js";
import { LoopedModel } from "./model.js";
import { tinyTwoLayers } from "./tiny-config.test-util.js";

const tiny = tinyTwoLayers(3);
const configs = {
  mamba: parseConfig({ ...tiny, backbone: "mamba" }),
  hybrid: parseConfig({ ...tiny, backbone: "hybrid", attn_layers: [1], loop_norm: true }),
  transformer: parseConfig({
    ...tiny,
    backbone: "transformer",
    mlp: { d_ff: 24 },
    tie_embeddings: false,
  }),
};
const tokens = intTensor([1, 4, 2, 9, 0, 3, 3, 7, 10, 5, 6, 2, 8, 1], [2, 7]);
const targets = intTensor([4, 2, -100, 0, 3, 3, 7, -100, 5, 6, 2, 8, 1, -100], [2, 7]);

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe.each(Object.entries(configs))("LoopedModel (%s)", (_name, cfg) => {
  it("returns readouts and logits of every loop step; 'last' matches step R", () => {
    const m = new LoopedModel(cfg, { seed: 3 });
    const all = noGrad(() => m.forward(tokens));
    expect(all.logits.length).toBe(3);
    expect(all.stepIndex).toEqual([1, 2, 3]);
    expect(all.logits[0]!.shape).toEqual([2, 7, 11]);
    expect(all.readouts[2]!.shape).toEqual([2, 7, 16]);
    const last = noGrad(() => m.forward(tokens, { steps: "last" }));
    expect(last.stepIndex).toEqual([3]);
    expect(Array.from(last.logits[0]!.data)).toEqual(Array.from(all.logits[2]!.data));
  });

  it("token-by-token decoding reproduces the parallel logits of every step", () => {
    const m = new LoopedModel(cfg, { seed: 4 });
    const par = noGrad(() => m.forward(tokens));
    const st = initDecodeState(m, 2, 7);
    const [B, T, V] = [2, 7, 11];
    for (let t = 0; t < T; t++) {
      const res = decodeStep(m, st, [tokens.data[t]!, tokens.data[T + t]!]);
      for (let r = 0; r < 3; r++) {
        for (let b = 0; b < B; b++) {
          const want = par.logits[r]!.data.subarray((b * T + t) * V, (b * T + t + 1) * V);
          const got = res.logits[r]!.data.subarray(b * V, (b + 1) * V);
          expect(maxDiff(got, want)).toBeLessThan(2e-4);
        }
      }
    }
    expect(() => decodeStep(m, st, [1, 2])).toThrow(/exceeds the decode capacity 7/);
  });

  it("gradient of the final-loop loss matches finite differences (weights shared over R steps)", () => {
    const m = new LoopedModel(cfg, { seed: 5 });
    const ps = m.parameters().filter((p) => !p.name.startsWith("exit_gate"));
    // atol 2e-3, not the default 1e-3: a whole looped model (2 layers × 3 loops of float32
    // kernels), and the embedding (init std 0.02, carried by the residual stream) bends on its own
    // small scale, so its entries need steps down to 2⁻¹⁰, where the loss's float32 rounding
    // divided by the step reaches ~1e-3 (the spread of successive estimates measured there).
    gradcheck(
      () => m.finalLoss(tokens, targets),
      ps.map((p) => p.tensor),
      { maxPerInput: 6, atol: 2e-3 },
    );
  });

  it("activation checkpointing, per loop step or per layer, gives the same loss and gradients", () => {
    const m = new LoopedModel(cfg, { seed: 6 });
    const ps = m.parameters().map((p) => p.tensor);
    const run = (checkpointing: Checkpointing) => {
      for (const p of ps) p.grad = null;
      const loss = m.finalLoss(tokens, targets, { checkpointing });
      backward(loss);
      return {
        loss: loss.item(),
        grads: ps.map((p) => (p.grad ? Float32Array.from(p.grad) : null)),
      };
    };
    const a = run(false);
    for (const mode of [true, "layer"] as const) {
      const b = run(mode);
      expect(b.loss).toBe(a.loss);
      a.grads.forEach((g, i) => {
        if (g === null) expect(b.grads[i]).toBeNull();
        else expect(maxDiff(b.grads[i]!, g)).toBeLessThan(1e-6);
      });
    }
  });
});

describe("generate", () => {
  it("is deterministic for a seed, greedy at temperature 0, and validates options", () => {
    const m = new LoopedModel(configs.hybrid, { seed: 7 });
    const a = generate(m, [1, 2, 3], {
      maxNewTokens: 5,
      temperature: 0.8,
      topK: 4,
      seed: 11,
    }).tokens;
    expect(a).toHaveLength(5);
    expect(
      generate(m, [1, 2, 3], { maxNewTokens: 5, temperature: 0.8, topK: 4, seed: 11 }).tokens,
    ).toEqual(a);
    const greedy = generate(m, [1, 2, 3], { maxNewTokens: 3, temperature: 0 }).tokens;
    const logits = noGrad(() => m.forward(intTensor([1, 2, 3], [1, 3]), { steps: "last" }))
      .logits[0] as Tensor;
    const row = logits.data.subarray(2 * 11, 3 * 11);
    expect(greedy[0]).toBe(row.indexOf(Math.max(...row)));
    expect(() => generate(m, [], { maxNewTokens: 1 })).toThrow(/at least one token/);
    expect(() => generate(m, [99], { maxNewTokens: 1 })).toThrow(/outside \[0, 11\)/);
  });
});
