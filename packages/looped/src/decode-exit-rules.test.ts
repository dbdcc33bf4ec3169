import { type ExitRule, formatExitRule, ruleExitSteps, softmaxStats } from "@loop/exit-gate";
import { describe, expect, it } from "vitest";
import { decodeStep, initDecodeState } from "./decode.js";
import { decodeStepEarlyExit, type EarlyExitOptions } from "./decode-early-exit.js";
import { generate } from "./generate.js";
import { configs, gatedModel, R, relErr, stateDiff, TOL, tokens } from "./helpers.test-util.js";
import type { LoopedModel } from "./model.js";
import { prefillEarlyExit } from "./prefill-early-exit.js";

const B = 3;
const T = 8;
const V = 11;

/** Full decoding of `ids` [B][T]: every token's per-step logits and readouts, step-major. */
function fullSteps(m: LoopedModel, ids: number[][]) {
  const st = initDecodeState(m, B, T);
  const perToken: { logits: Float32Array[]; readouts: Float32Array[] }[] = [];
  for (let t = 0; t < T; t++) {
    const res = decodeStep(
      m,
      st,
      ids.map((row) => row[t]!),
    );
    perToken.push({
      logits: res.logits.map((l) => l.data.slice()),
      readouts: res.readouts.map((x) => x.data.slice()),
    });
  }
  return perToken;
}

/**
 * Thresholds near the 30th and 70th percentile of a signal over every (token, step), so exits
 * spread; each midway between two observed values (prefill's chunked scan rounds unlike the
 * recurrence, so a threshold on an observed value could fall on either side).
 */
function spread(values: number[]): number[] {
  const s = [...values].sort((a, b) => a - b);
  return [0.3, 0.7].map((f) => {
    const i = Math.floor(s.length * f);
    return (s[i]! + s[i + 1]!) / 2;
  });
}

describe.each(Object.entries(configs))("early-exit decoding under exit rules (%s)", (_n, cfg) => {
  const m = gatedModel(cfg, 7);
  const ids = tokens(B, T, 3);
  const full = fullSteps(m, ids);
  const maxP: number[] = [];
  const ent: number[] = [];
  for (const tok of full)
    for (const l of tok.logits)
      for (let b = 0; b < B; b++) {
        const s = softmaxStats(l.subarray(b * V, (b + 1) * V));
        maxP.push(s.maxProb);
        ent.push(s.entropy);
      }
  const rules: ExitRule[] = [
    { kind: "gate", q: 0.5 },
    ...spread(maxP).map((tau) => ({ kind: "confidence", tau }) as ExitRule),
    ...spread(ent).map((tau) => ({ kind: "entropy", tau }) as ExitRule),
    { kind: "state-change", eps: 0.3 },
    { kind: "state-change", eps: 1 },
    { kind: "agree", k: 1 },
    { kind: "fixed", step: 2 },
  ];

  it("the first token exits where the rule on full decoding's steps says, with that step's logits", () => {
    for (const rule of rules) {
      const got = decodeStepEarlyExit(m, initDecodeState(m, B, 1), column(ids, 0), { rule });
      const tok = full[0]!;
      const gateLogits = new Float32Array(R * B);
      tok.readouts.forEach((ro, r) => {
        for (let b = 0; b < B; b++) gateLogits[r * B + b] = m.exitGate!.logitRow(ro, b);
      });
      const z = ruleExitSteps(rule, { logits: tok.logits, states: tok.readouts, gateLogits }, B, R);
      expect([...got.exitSteps], formatExitRule(rule)).toEqual([...z]);
      for (let b = 0; b < B; b++)
        expect(got.logits.data.subarray(b * V, (b + 1) * V)).toEqual(
          tok.logits[z[b]! - 1]!.subarray(b * V, (b + 1) * V),
        );
    }
  });

  it("rows exit independently and prefill leaves the states decoding leaves, for every rule", () => {
    const seen = new Set<number>();
    for (const rule of rules) {
      const opts: EarlyExitOptions = { rule };
      const a = initDecodeState(m, B, T);
      const singles = Array.from({ length: B }, () => initDecodeState(m, 1, T));
      const steps: number[] = [];
      for (let t = 0; t < T; t++) {
        const res = decodeStepEarlyExit(m, a, column(ids, t), opts);
        for (let b = 0; b < B; b++) {
          const one = decodeStepEarlyExit(m, singles[b]!, [ids[b]![t]!], opts);
          expect(one.exitSteps[0], formatExitRule(rule)).toBe(res.exitSteps[b]);
          expect(
            relErr(one.logits.data, res.logits.data.subarray(b * V, (b + 1) * V)),
          ).toBeLessThan(TOL);
          steps.push(res.exitSteps[b]!);
        }
      }
      const p = initDecodeState(m, B, T);
      const pre = prefillEarlyExit(m, p, ids, opts);
      const diff = stateDiff(p, a);
      expect(diff.err, `${formatExitRule(rule)} ${diff.at}`).toBeLessThan(TOL);
      // the same exits, token by token or in one prefill (row-major [B·T] vs token-major)
      const byDecode = Array.from(
        { length: B * T },
        (_v, i) => steps[(i % T) * B + Math.floor(i / T)]!,
      );
      expect([...pre.exitSteps]).toEqual(byDecode);
      for (const z of steps) seen.add(z);
    }
    // the thresholds make the rules exit at several different steps (not a vacuous comparison)
    expect(seen.size).toBeGreaterThan(2);
  });

  it("refuses the oracle, and a rule beside q", () => {
    const st = initDecodeState(m, B, 1);
    expect(() => decodeStepEarlyExit(m, st, column(ids, 0), { rule: { kind: "oracle" } })).toThrow(
      "decodeStepEarlyExit: oracle is not realisable (it reads the target): it runs in evaluation only",
    );
    expect(() =>
      decodeStepEarlyExit(m, st, column(ids, 0), { q: 0.5, rule: { kind: "agree", k: 1 } }),
    ).toThrow("decodeStepEarlyExit: give q or rule, not both");
  });
});

function column(ids: number[][], t: number): number[] {
  return ids.map((row) => row[t]!);
}

describe("generate under an exit rule", () => {
  const m = gatedModel(configs.mamba, 4);
  const prompt = [1, 4, 2, 9];
  it("gate:q generates what the threshold policy q does, fixed:k what the fixed policy does", () => {
    const opts = { maxNewTokens: 6, temperature: 0.8, topK: 5, seed: 9 };
    const gate = generate(m, prompt, {
      ...opts,
      policy: { kind: "rule", rule: { kind: "gate", q: 0.5 } },
    });
    const thr = generate(m, prompt, { ...opts, policy: { kind: "threshold", q: 0.5 } });
    expect(gate).toEqual(thr);
    const fixedRule = generate(m, prompt, {
      ...opts,
      policy: { kind: "rule", rule: { kind: "fixed", step: 2 } },
    });
    const fixed = generate(m, prompt, { ...opts, policy: { kind: "fixed", step: 2 } });
    expect(fixedRule).toEqual(fixed);
  });

  it("runs an entropy rule and refuses the oracle by name", () => {
    const res = generate(m, prompt, {
      maxNewTokens: 4,
      temperature: 0,
      policy: { kind: "rule", rule: { kind: "entropy", tau: 2.2 } },
    });
    expect(res.tokens.length).toBe(4);
    expect(res.exitSteps.length).toBe(prompt.length + 3);
    expect(() =>
      generate(m, prompt, { maxNewTokens: 1, policy: { kind: "rule", rule: { kind: "oracle" } } }),
    ).toThrow(
      "generate: oracle is not realisable (it reads the target): it runs in evaluation only",
    );
  });
});
