import { parseExitRules } from "@loop/exit-gate";
import { describe, expect, it } from "vitest";
import { evaluateAccuracy } from "./accuracy.js";
import { metricSection } from "./eval-file.js";
import { handMadeModel, handMadeRows, V } from "./hand-made-model.test-util.js";
import { tableModel } from "./helpers.test-util.js";
import { evaluatePerplexity } from "./perplexity.js";

/* The hand-made case of hand-made-model.test-util.ts (4 rows, V = 5, R = 3). */
const model = handMadeModel;
const rows = () => handMadeRows();

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
