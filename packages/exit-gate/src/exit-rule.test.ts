import { tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { exitPdf } from "./exit-pdf.js";
import {
  type ExitRule,
  formatExitRule,
  isRealisable,
  OnlineExitRule,
  parseExitRule,
  parseExitRules,
  relativeChange,
  ruleExitSteps,
  softmaxStats,
} from "./exit-rule.js";

// Hand-built steps of three token rows (M = 3), R = 4, V = 3, D = 2.
// row 0: sharpens step by step, argmax 2 from step 2 on, state settles at step 3;
// row 1: confident at once (argmax 0 throughout), state still moving;
// row 2: never confident, argmax flips 1,0,1,0; state constant from step 1.
const R = 4;
const M = 3;
const logits = [
  [0, 0.1, 0, /**/ 5, 0, 0, /**/ 0, 1, 0],
  [0, 0, 2, /**/ 6, 0, 0, /**/ 1, 0, 0],
  [0, 0, 4, /**/ 7, 0, 0, /**/ 0, 1, 0],
  [0, 0, 8, /**/ 8, 0, 0, /**/ 1, 0, 0],
].map((x) => Float32Array.from(x));
const states = [
  [1, 0, /**/ 1, 0, /**/ 3, 4],
  [0, 1, /**/ 0, 1, /**/ 3, 4],
  [0, 1.001, /**/ 1, 1, /**/ 3, 4],
  [0, 1.001, /**/ 2, 1, /**/ 3, 4],
].map((x) => Float32Array.from(x));
const targets = [2, 0, 0];

function steps(text: string): number[] {
  return [...ruleExitSteps(parseExitRule(text, R), { logits, states, targets }, M, R)];
}

describe("exit rules on hand-built steps", () => {
  it("softmax statistics and the relative change are the textbook ones", () => {
    const s = softmaxStats([0, 0, 0, 0]);
    expect(s.maxProb).toBeCloseTo(0.25, 14);
    expect(s.entropy).toBeCloseTo(Math.log(4), 14);
    const t = softmaxStats([1000, 0]); // no overflow
    expect(t.maxProb).toBeCloseTo(1, 12);
    expect(t.entropy).toBeCloseTo(0, 12);
    expect(relativeChange([3, 4], [0, 4])).toBeCloseTo(3 / 5, 14);
    expect(relativeChange([0, 0], [0, 0])).toBe(0);
  });

  it("fixed:k exits every row at k", () => {
    expect(steps("fixed:1")).toEqual([1, 1, 1]);
    expect(steps("fixed:3")).toEqual([3, 3, 3]);
    expect(steps("fixed:4")).toEqual([4, 4, 4]);
  });

  it("confidence:τ exits at the first step whose max probability reaches τ", () => {
    // row 0 max p: 0.3559, 0.7870, 0.9641, 0.99933; row 1: 0.9867 at step 1
    expect(steps("confidence:0.9")).toEqual([3, 1, 4]);
    expect(steps("confidence:0.99")).toEqual([4, 2, 4]);
    expect(steps("confidence:0")).toEqual([1, 1, 1]);
    expect(steps("confidence:1")).toEqual([4, 4, 4]);
  });

  it("entropy:τ exits at the first step whose entropy (nats) is at most τ", () => {
    const h = (l: number[]) => softmaxStats(l).entropy;
    expect(h([0, 0, 4])).toBeLessThan(0.2);
    expect(h([0, 0, 2])).toBeGreaterThan(0.2);
    expect(steps("entropy:0.2")).toEqual([3, 1, 4]);
    expect(steps(`entropy:${Math.log(3)}`)).toEqual([1, 1, 1]);
    expect(steps("entropy:0")).toEqual([4, 4, 4]);
  });

  it("state-change:ε compares the readout with the previous step's, from step 2 on", () => {
    // row 0: change 1.414 at 2, 0.001 at 3; row 1: 1.414 at 2, 0.707 at 3;
    // row 2: 0 at every step ≥ 2 (never at step 1: no previous step)
    expect(steps("state-change:0.01")).toEqual([3, 4, 2]);
    expect(steps("state-change:0.8")).toEqual([3, 3, 2]);
    expect(steps("state-change:0")).toEqual([4, 4, 4]);
  });

  it("agree:k exits once the argmax stayed the same over k consecutive steps", () => {
    // argmax row 0: 1,2,2,2; row 1: 0,0,0,0; row 2: 1,0,1,0
    expect(steps("agree:1")).toEqual([3, 2, 4]);
    expect(steps("agree:2")).toEqual([4, 3, 4]);
    expect(steps("agree:3")).toEqual([4, 4, 4]);
  });

  it("oracle exits at the first step whose argmax is the target (R when none is)", () => {
    expect(steps("oracle")).toEqual([2, 1, 2]);
    expect(isRealisable({ kind: "oracle" })).toBe(false);
    expect(isRealisable({ kind: "gate", q: 0.5 })).toBe(true);
  });

  it("gate:q decided online equals threshold exit on the pdf", () => {
    // gate logits a [R, M]
    const a = Float32Array.from([-2, 3, -3, /**/ 0.5, 0, -3, /**/ 2, 0, -3, /**/ 0, 0, 0]);
    const pdf = exitPdf(tensor(a, [R, M]));
    for (const q of [0, 0.1, 0.3, 0.5, 0.7, 0.9, 1]) {
      const rule: ExitRule = { kind: "gate", q };
      const online = ruleExitSteps(rule, { gateLogits: a }, M, R);
      const onPdf = ruleExitSteps(rule, { pdf }, M, R);
      expect([...online]).toEqual([...onPdf]);
    }
    // CDF row 0: 0.119, 0.667, 0.960; row 1: 0.953 at step 1; row 2: 0.047, 0.093, 0.135
    expect([...ruleExitSteps({ kind: "gate", q: 0.5 }, { gateLogits: a }, M, R)]).toEqual([
      2, 1, 4,
    ]);
  });

  it("each row's decision reads only its own steps up to the exit", () => {
    const rule = new OnlineExitRule({ kind: "agree", k: 1 }, 2, R);
    // row 1 fed a different history does not change row 0's exit
    expect(rule.step(0, 0, { logits: [1, 0] })).toBe(false);
    expect(rule.step(1, 0, { logits: [0, 1] })).toBe(false);
    expect(rule.step(1, 1, { logits: [1, 0] })).toBe(false);
    expect(rule.step(0, 1, { logits: [1, 0] })).toBe(true);
    // the last step always exits; a missing signal is named
    expect(new OnlineExitRule({ kind: "entropy", tau: 0 }, 1, R).step(0, R - 1, {})).toBe(true);
    expect(() => new OnlineExitRule({ kind: "entropy", tau: 0 }, 1, R).step(0, 0, {})).toThrow(
      "exit rule entropy:0: step 1 has no logits",
    );
  });
});

describe("parsing --exit rules", () => {
  it("reads every kind and writes it back", () => {
    for (const t of [
      "fixed:2",
      "gate:0.3",
      "confidence:0.9",
      "entropy:0.5",
      "state-change:0.01",
      "agree:2",
      "oracle",
    ])
      expect(formatExitRule(parseExitRule(t))).toBe(t);
    expect(parseExitRules("gate:0.5, entropy:1e-1")).toEqual([
      { kind: "gate", q: 0.5 },
      { kind: "entropy", tau: 0.1 },
    ]);
  });

  it("refuses bad rules with one line naming the text", () => {
    const cases: [string, string][] = [
      ["stop:1", 'exit rule "stop:1": unknown rule "stop"'],
      ["gate", 'exit rule "gate": gate needs a value'],
      ["gate:1.5", 'exit rule "gate:1.5": q must be in [0, 1], got 1.5'],
      ["gate:abc", 'exit rule "gate:abc": "abc" is not a number'],
      ["confidence:2", "τ must be a probability in [0, 1], got 2"],
      ["entropy:-1", "τ must be ≥ 0 nats, got -1"],
      ["state-change:-0.1", "ε must be ≥ 0, got -0.1"],
      ["fixed:0", "the step must be an integer ≥ 1 and ≤ 4, got 0"],
      ["fixed:5", "the step must be an integer ≥ 1 and ≤ 4, got 5"],
      ["fixed:1.5", "the step must be an integer ≥ 1 and ≤ 4, got 1.5"],
      ["agree:4", "k must be an integer ≥ 1 and ≤ 3, got 4"],
      ["oracle:1", "oracle takes no value"],
    ];
    for (const [text, msg] of cases) {
      let err: Error | null = null;
      try {
        parseExitRule(text, 4);
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).toContain(msg);
      expect(err?.message).toContain("(expected fixed:<r> | gate:<q>");
      expect(err?.message.includes("\n")).toBe(false);
    }
    expect(() => parseExitRules(" , ")).toThrow(/none given/);
  });
});
