import { parseExitRules } from "@loop/exit-gate";
import { IGNORE_INDEX } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { evaluateAccuracy } from "./accuracy.js";
import { metricSection } from "./eval-file.js";
import { tableModel } from "./helpers.test-util.js";
import { evaluatePerplexity } from "./perplexity.js";

/*
 * The hand-made case of accuracy.test.ts: 4 rows, T = 2, the answer of row b is class b + 1 at
 * position 1 (V = 5, R = 3). Step r puts logit 100 on the answer for rows b < r, else on the
 * wrong class (answer mod 4) + 1; readout column 0 (the gate logit, and logit 0) is +10 from row
 * b's step EXIT[b] on, −10 before. Readout = logits, so state-change reads the logits.
 *   argmax by step: row 0: 1 1 1 · row 1: 3 2 2 · row 2: 4 4 3 · row 3: 1 1 1 (never right)
 */
const V = 5;
const EXIT = [1, 3, 2, 3];

function rows() {
  const tokens = new Int32Array(8);
  const targets = new Int32Array(8).fill(IGNORE_INDEX);
  for (let b = 0; b < 4; b++) {
    tokens[b * 2] = b;
    targets[b * 2 + 1] = b + 1;
  }
  return { tokens, targets, shape: [4, 2] as [number, number] };
}

const model = tableModel(
  3,
  V,
  (r, tokens, B, T) => {
    const out = new Float32Array(B * T * V);
    for (let b = 0; b < B; b++) {
      const id = tokens[b * T]!;
      for (let t = 0; t < T; t++) {
        const o = (b * T + t) * V;
        const answer = id + 1;
        out[o + (id < r ? answer : (answer % 4) + 1)] = 100;
        out[o] = t === 0 || r >= EXIT[id]! ? 10 : -10;
      }
    }
    return out;
  },
  true,
);

describe("exit rules in evaluateAccuracy", () => {
  it("gives each rule's exit steps over the scored positions and its accuracy", async () => {
    const exits = parseExitRules(
      "fixed:2,gate:0.5,confidence:0.9,agree:1,state-change:0.5,oracle",
      3,
    );
    const res = await evaluateAccuracy(model, [rows()], { qs: [0.5], exits });
    const by = Object.fromEntries(res.exits.map((e) => [e.rule, e]));
    // fixed:2 is loop step 2
    expect(by["fixed:2"]!.accuracy).toBe(res.steps[1]!.accuracy);
    expect(by["fixed:2"]!.histogram).toEqual([0, 4, 0]);
    // gate:0.5 is the gate's threshold exit at q = 0.5 (rows exit at EXIT)
    expect(by["gate:0.5"]!.histogram).toEqual(res.gated[0]!.histogram);
    expect(by["gate:0.5"]!.accuracy).toBe(res.gated[0]!.accuracy);
    expect(by["gate:0.5"]!.histogram).toEqual([1, 1, 2]);
    // every step is sure of its argmax: confidence exits all at step 1
    expect(by["confidence:0.9"]!.histogram).toEqual([4, 0, 0]);
    expect(by["confidence:0.9"]!.accuracy).toBe(0.25);
    // agree:1: rows 0, 2, 3 repeat their argmax at step 2 (row 2 wrongly), row 1 at step 3
    expect(by["agree:1"]!.histogram).toEqual([0, 3, 1]);
    expect(by["agree:1"]!.accuracy).toBe(0.5);
    // readout change at step 2: row 0 0, row 1 1.41, row 2 0.199, row 3 0
    expect(by["state-change:0.5"]!.histogram).toEqual([0, 3, 1]);
    expect(by["state-change:0.5"]!.accuracy).toBe(0.5);
    // oracle: the first step that is right (row 3 never is: R), not realisable
    expect(by.oracle!.histogram).toEqual([1, 1, 2]);
    expect(by.oracle!.accuracy).toBe(0.75);
    expect(by.oracle!.meanStep).toBe(2.25);
    expect(by.oracle!.realisable).toBe(false);
    expect(res.exits.map((e) => e.rule)).toEqual([
      "fixed:2",
      "gate:0.5",
      "confidence:0.9",
      "agree:1",
      "state-change:0.5",
      "oracle",
    ]);
    const section = metricSection(res);
    expect(section.exits![5]).toEqual({
      rule: "oracle",
      realisable: false,
      mean_step: 2.25,
      value: 0.75,
      histogram: [1, 1, 2],
    });
  });

  it("refuses a gate rule on a model without a gate, and a rule beyond R", async () => {
    const plain = tableModel(3, V, (_r, _t, B, T) => new Float32Array(B * T * V));
    await expect(
      evaluateAccuracy(plain, [rows()], { exits: [{ kind: "gate", q: 0.5 }] }),
    ).rejects.toThrow("evaluateAccuracy: gate:0.5 needs a model with an exit gate");
    await expect(
      evaluateAccuracy(model, [rows()], { exits: [{ kind: "fixed", step: 4 }] }),
    ).rejects.toThrow("evaluateAccuracy: fixed:4: the step must be an integer in [1, 3]");
  });
});

describe("exit rules in evaluatePerplexity", () => {
  it("fixed:r is step r's perplexity and gate:q the gate's at q", async () => {
    const exits = parseExitRules("fixed:1,fixed:3,gate:0.5,entropy:0.1", 3);
    const res = await evaluatePerplexity(model, [rows()], { qs: [0.5], exits });
    expect(res.exits[0]!.nll).toBeCloseTo(res.steps[0]!.nll, 12);
    expect(res.exits[1]!.nll).toBeCloseTo(res.steps[2]!.nll, 12);
    expect(res.exits[2]!.nll).toBeCloseTo(res.gated[0]!.nll, 12);
    expect(res.exits[2]!.histogram).toEqual(res.gated[0]!.histogram);
    // every step's softmax is all but one-hot: entropy exits at step 1
    expect(res.exits[3]!.histogram).toEqual([4, 0, 0]);
    expect(res.exits[3]!.nll).toBeCloseTo(res.steps[0]!.nll, 12);
  });
});
