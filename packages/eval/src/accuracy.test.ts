import { argmaxLogits, type Batch, mano, scoreTargets } from "@loop/tasks";
import { intTensor, noGrad } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { evaluateAccuracy } from "./accuracy.js";
import { stepOutputs } from "./eval-model.js";
import { handMadeModel, handMadeRows } from "./hand-made-model.test-util.js";
import { tinyLoopedModel } from "./helpers.test-util.js";

const model = handMadeModel;
const rows = handMadeRows;

describe("evaluateAccuracy (hand-made model)", () => {
  it("gives the accuracy of every loop step", async () => {
    const res = await evaluateAccuracy(model, [rows(4, 0)]);
    expect(res.steps.map((s) => s.accuracy)).toEqual([0.25, 0.5, 0.75]);
    expect(res.steps.map((s) => s.total)).toEqual([4, 4, 4]);
    expect(res.examples).toBe(4);
    expect(res.gated).toEqual([]);
  });

  it("selects each token's exit step with the gate, over a q sweep sorted by q", async () => {
    const res = await evaluateAccuracy(model, [rows(4, 0)], { qs: [0.5, 0, 1] });
    expect(res.gated.map((g) => g.q)).toEqual([0, 0.5, 1]);
    const [q0, qh, q1] = res.gated;
    // q = 0: every token exits at step 1
    expect(q0!.accuracy).toBe(0.25);
    expect(q0!.meanStep).toBe(1);
    expect(q0!.histogram).toEqual([4, 0, 0]);
    // q = 0.5: rows exit at 1, 3, 2, 3 → correct for rows 0 (step 1) and 1 (step 3)
    expect(qh!.accuracy).toBe(0.5);
    expect(qh!.meanStep).toBe(2.25);
    expect(qh!.histogram).toEqual([1, 1, 2]);
    // q = 1: every token runs to step R
    expect(q1!.accuracy).toBe(0.75);
    expect(q1!.meanStep).toBe(3);
  });

  it("a source of outputs computed elsewhere, asynchronously, gives the same result as the model", async () => {
    const batches = [rows(1, 0), rows(3, 1)];
    const source = {
      config: model.config,
      hasGate: model.exitGate !== null,
      outputs: async (b: Batch, gate: boolean) =>
        stepOutputs(model, intTensor(b.tokens, [...b.shape]), gate, b.seqIdx),
    };
    const opts = { qs: [0.5, 1] };
    expect(await evaluateAccuracy(source, batches, opts)).toEqual(
      await evaluateAccuracy(model, batches, opts),
    );
  });

  it("does not depend on how the set is batched", async () => {
    const one = await evaluateAccuracy(model, [rows(4, 0)], { qs: [0.5] });
    const two = await evaluateAccuracy(model, [rows(1, 0), rows(3, 1)], { qs: [0.5] });
    expect(two).toEqual(one);
  });

  it("rejects bad input", async () => {
    await expect(evaluateAccuracy(model, [])).rejects.toThrow(/batches is empty/);
    await expect(evaluateAccuracy(model, [rows(4, 0)], { qs: [1.5] })).rejects.toThrow(
      /qs\[0\] must be a threshold in \[0, 1\], got 1.5/,
    );
    const bad = rows(1, 0);
    bad.tokens[0] = 9;
    await expect(evaluateAccuracy(model, [bad])).rejects.toThrow(
      /tokens\[0\] = 9 is outside the model's vocab \[0, 5\)/,
    );
  });
});

describe("evaluateAccuracy (tiny looped Mamba-2 on Mano)", () => {
  const task = mano({ maxOps: 2 });
  const m = tinyLoopedModel({ loops: 3, gate: true });

  it("matches argmax of each step's logits scored by the task", async () => {
    const batches = task.evalSet({ count: 12, batchSize: 5 });
    const res = await evaluateAccuracy(m, batches, { score: (b, p) => task.score(b, p) });
    const expected = [0, 1, 2].map((r) => {
      let c = 0;
      let n = 0;
      for (const b of batches) {
        const logits = noGrad(() => m.forward(intTensor(b.tokens, [...b.shape]), { steps: "all" }))
          .logits[r]!;
        const s = scoreTargets(b, argmaxLogits(logits.data, 32));
        c += s.correct;
        n += s.total;
      }
      return c / n;
    });
    expect(res.steps.map((s) => s.accuracy)).toEqual(expected);
    expect(res.steps.every((s) => s.total === 12)).toBe(true);
  });

  it("q = 0 reproduces step 1 and q = 1 step R; batching does not matter", async () => {
    const a = await evaluateAccuracy(m, task.evalSet({ count: 12, batchSize: 12 }), {
      qs: [0, 0.5, 1],
    });
    const b = await evaluateAccuracy(m, task.evalSet({ count: 12, batchSize: 4 }), {
      qs: [0, 0.5, 1],
    });
    expect(b).toEqual(a);
    expect(a.gated[0]!.accuracy).toBe(a.steps[0]!.accuracy);
    expect(a.gated[0]!.meanStep).toBe(1);
    expect(a.gated[2]!.accuracy).toBe(a.steps[2]!.accuracy);
    expect(a.gated[2]!.meanStep).toBe(3);
    const h = a.gated[1]!.histogram;
    expect(h.reduce((x, y) => x + y, 0)).toBe(12);
  });
});
