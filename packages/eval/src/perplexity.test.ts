import { type Batch, mano } from "@loop/tasks";
import { crossEntropy, IGNORE_INDEX, intTensor, noGrad } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { stepOutputs } from "./eval-model.js";
import { tableModel, tinyLoopedModel } from "./helpers.test-util.js";
import { evaluatePerplexity } from "./perplexity.js";

const V = 6;

function lmBatch(B: number, T: number) {
  const tokens = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  for (let i = 0; i < B * T; i++) {
    tokens[i] = (i * 5) % V;
    targets[i] = i % 4 === 3 ? IGNORE_INDEX : (i * 7 + 1) % V;
  }
  return { tokens, targets, shape: [B, T] as [number, number] };
}

describe("evaluatePerplexity (hand-made logits)", () => {
  it("uniform logits give PPL = V; a step with the target at log-prob ℓ gives exp(−ℓ)", async () => {
    // step 1 uniform; step 2: target logit log(3), others 0 → p(target) = 3 / (3 + V − 1)
    const batch = lmBatch(2, 8);
    const m = tableModel(2, V, (r, _tokens, B, T) => {
      const out = new Float32Array(B * T * V);
      if (r === 2)
        for (let i = 0; i < B * T; i++) {
          const y = batch.targets[i]!;
          if (y !== IGNORE_INDEX) out[i * V + y] = Math.log(3);
        }
      return out;
    });
    const res = await evaluatePerplexity(m, [batch]);
    expect(res.tokens).toBe(12);
    expect(res.steps[0]!.ppl).toBeCloseTo(V, 10);
    expect(res.steps[0]!.nll).toBeCloseTo(Math.log(V), 10);
    expect(res.steps[1]!.ppl).toBeCloseTo((3 + V - 1) / 3, 6);
  });

  it("a source of outputs computed elsewhere, asynchronously, gives the same result as the model", async () => {
    const m = tableModel(2, V, (r, tokens, B, T) =>
      Float32Array.from({ length: B * T * V }, (_v, i) => ((i * r + tokens[i % (B * T)]!) % 7) / 3),
    );
    const batches = [lmBatch(2, 8), lmBatch(1, 5)];
    const source = {
      config: m.config,
      hasGate: false,
      outputs: async (b: Batch, gate: boolean) =>
        stepOutputs(m, intTensor(b.tokens, [...b.shape]), gate, b.seqIdx),
    };
    expect(await evaluatePerplexity(source, batches)).toEqual(await evaluatePerplexity(m, batches));
  });

  it("rejects a batch without scored targets and out-of-vocab targets", async () => {
    const m = tableModel(1, V, (_r, _t, B, T) => new Float32Array(B * T * V));
    const b = lmBatch(1, 4);
    b.targets.fill(IGNORE_INDEX);
    await expect(evaluatePerplexity(m, [b])).rejects.toThrow(/no target ≠ −100/);
    const c = lmBatch(1, 4);
    c.targets[1] = 6;
    await expect(evaluatePerplexity(m, [c])).rejects.toThrow(
      /targets\[1\] = 6 is outside \[0, 6\)/,
    );
  });
});

describe("evaluatePerplexity (tiny looped Mamba-2)", () => {
  const m = tinyLoopedModel({ loops: 2, gate: true });
  const batch = mano({ maxOps: 2 }).trainBatch({ seed: 4, position: 0 }, 3).batch;
  // next-token targets over the whole row, as language modelling scores them
  const [B, T] = batch.shape;
  const targets = new Int32Array(B * T).fill(IGNORE_INDEX);
  for (let b = 0; b < B; b++)
    for (let t = 0; t + 1 < T; t++) targets[b * T + t] = batch.tokens[b * T + t + 1]!;
  const lm = { ...batch, targets };

  it("exp of crossEntropy of each step's logits", async () => {
    const res = await evaluatePerplexity(m, [lm]);
    const fwd = noGrad(() => m.forward(intTensor(lm.tokens, [B, T]), { steps: "all" }));
    fwd.logits.forEach((l, r) => {
      const ce = crossEntropy(l, intTensor(targets, [B, T])).item();
      expect(res.steps[r]!.nll).toBeCloseTo(ce, 5);
      expect(res.steps[r]!.ppl).toBeCloseTo(Math.exp(ce), 4);
    });
  });

  it("gated: q = 0 is step 1, q = 1 is step R", async () => {
    const res = await evaluatePerplexity(m, [lm], { qs: [1, 0] });
    expect(res.gated[0]!.q).toBe(0);
    expect(res.gated[0]!.nll).toBeCloseTo(res.steps[0]!.nll, 12);
    expect(res.gated[1]!.nll).toBeCloseTo(res.steps[1]!.nll, 12);
    expect(res.gated[1]!.meanStep).toBe(2);
  });
});
