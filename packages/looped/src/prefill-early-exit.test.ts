import { describe, expect, it } from "vitest";
import { type DecodeState, initDecodeState } from "./decode.js";
import {
  addEarlyExitCounts,
  decodeStepEarlyExit,
  type EarlyExitCounts,
  type EarlyExitOptions,
  emptyEarlyExitCounts,
} from "./decode-early-exit.js";
import { configs, gatedModel, relErr, stateDiff, TOL, tokens } from "./helpers.test-util.js";
import { LoopedModel } from "./model.js";
import { prefillEarlyExit } from "./prefill-early-exit.js";

/** T decodeStepEarlyExit calls: exit steps [B·T] (row-major), last logits, summed counts. */
function stepAll(m: LoopedModel, st: DecodeState, ids: number[][], opts: EarlyExitOptions) {
  const B = ids.length;
  const T = ids[0]!.length;
  const exitSteps = new Int32Array(B * T);
  const counts: EarlyExitCounts = emptyEarlyExitCounts();
  let logits: Float32Array = new Float32Array(0);
  for (let t = 0; t < T; t++) {
    const res = decodeStepEarlyExit(
      m,
      st,
      ids.map((row) => row[t]!),
      opts,
    );
    for (let b = 0; b < B; b++) exitSteps[b * T + t] = res.exitSteps[b]!;
    addEarlyExitCounts(counts, res);
    logits = res.logits.data;
  }
  return { exitSteps, logits, counts };
}

const policies: [string, EarlyExitOptions][] = [
  ["q = 0.5, carry", { q: 0.5 }],
  ["q = 0.5, propagate", { q: 0.5, skipped: "propagate" }],
  ["q = 0.8, maxStep 3", { q: 0.8, maxStep: 3 }],
  ["fixed step 2, propagate", { maxStep: 2, skipped: "propagate" }],
  ["q = 0", { q: 0 }],
  ["q = 1", { q: 1 }],
];

describe.each(Object.entries(configs))("prefillEarlyExit (%s)", (_name, cfg) => {
  const m = gatedModel(cfg, 3);
  for (const [label, opts] of policies) {
    for (const B of [1, 3]) {
      it(`${label}, batch ${B}: exit steps, logits, counts and states of T decodeStepEarlyExit calls`, () => {
        // 2 tokens decoded first (a non-zero start), then 7 (not a multiple of chunk_size 4)
        const first = tokens(B, 2, 5);
        const prompt = tokens(B, 7, 6);
        const a = initDecodeState(m, B, 12);
        const b = initDecodeState(m, B, 12);
        stepAll(m, a, first, opts);
        stepAll(m, b, first, opts);
        const got = prefillEarlyExit(m, a, prompt, opts);
        const want = stepAll(m, b, prompt, opts);
        expect(Array.from(got.exitSteps)).toEqual(Array.from(want.exitSteps));
        expect(relErr(got.logits.data, want.logits)).toBeLessThan(TOL);
        expect(got.logits.shape).toEqual([B, 11]);
        const { logits: _l, exitSteps: _e, ...counts } = got;
        expect(counts).toEqual(want.counts);
        const diff = stateDiff(a, b);
        expect(diff.err, diff.at).toBeLessThan(TOL);
        // decoding continues alike
        const next = tokens(B, 2, 7);
        const ga = stepAll(m, a, next, opts);
        const gb = stepAll(m, b, next, opts);
        expect(Array.from(ga.exitSteps)).toEqual(Array.from(gb.exitSteps));
        expect(relErr(ga.logits, gb.logits)).toBeLessThan(TOL);
      });
    }
  }

  it("the threshold spreads the exits over several steps (the comparisons above are not vacuous)", () => {
    const res = prefillEarlyExit(m, initDecodeState(m, 3, 7), tokens(3, 7, 6), { q: 0.5 });
    expect(new Set(res.exitSteps).size).toBeGreaterThan(1);
  });
});

describe("prefillEarlyExit input checks", () => {
  it("names the problem", () => {
    const m = gatedModel(configs.mamba, 1);
    const st = initDecodeState(m, 2, 4);
    expect(() => prefillEarlyExit(m, st, tokens(1, 2), { q: 0.5 })).toThrow(
      "prefillEarlyExit: expected 2 sequences of token ids, got 1",
    );
    expect(() => prefillEarlyExit(m, st, tokens(2, 5), { q: 0.5 })).toThrow(
      "prefillEarlyExit: 5 token(s) at position 0 exceed the decode capacity 4",
    );
    expect(() => prefillEarlyExit(m, st, tokens(2, 2), { q: 2 })).toThrow(/q must be in/);
    expect(() => prefillEarlyExit(m, st, tokens(2, 2), { maxStep: 5 })).toThrow(
      "prefillEarlyExit: maxStep must be an integer in [1, 4], got 5",
    );
    const plain = new LoopedModel({ ...configs.mamba, exit_gate: false });
    expect(() =>
      prefillEarlyExit(plain, initDecodeState(plain, 1, 4), tokens(1, 2), { q: 0.5 }),
    ).toThrow("prefillEarlyExit: the model has no exit gate (config.exit_gate is false)");
    expect(st.position).toBe(0);
  });
});
