import { describe, expect, it } from "vitest";
import { type DecodeState, type DecodeStepResult, decodeStep, initDecodeState } from "./decode.js";
import { configs, R, relErr, stateDiff, TOL, tokens } from "./helpers.test-util.js";
import { LoopedModel } from "./model.js";
import { prefill } from "./prefill.js";

/** T decodeStep calls, one column of `ids` each; the last call's result. */
function stepAll(model: LoopedModel, st: DecodeState, ids: number[][]): DecodeStepResult {
  let res: DecodeStepResult | null = null;
  for (let t = 0; t < ids[0]!.length; t++)
    res = decodeStep(
      model,
      st,
      ids.map((row) => row[t]!),
    );
  return res!;
}

function expectSameStates(got: DecodeState, want: DecodeState): void {
  const { err, at } = stateDiff(got, want);
  expect(err, at).toBeLessThan(TOL);
}

function expectSameResult(got: DecodeStepResult, want: DecodeStepResult): void {
  expect(got.logits.length).toBe(want.logits.length);
  expect(got.readouts.length).toBe(want.readouts.length);
  got.readouts.forEach((ro, r) => {
    expect(ro.shape).toEqual(want.readouts[r]!.shape);
    expect(relErr(ro.data, want.readouts[r]!.data), `readout ${r + 1}`).toBeLessThan(TOL);
  });
  got.logits.forEach((lg, r) => {
    expect(lg.shape).toEqual(want.logits[r]!.shape);
    expect(relErr(lg.data, want.logits[r]!.data), `logits ${r + 1}`).toBeLessThan(TOL);
  });
}

describe("prefill", () => {
  for (const [name, cfg] of Object.entries(configs)) {
    const model = new LoopedModel(cfg, { seed: 5 });
    for (const B of [1, 3]) {
      // 7 and 10: not multiples of chunk_size 4 (a partial last chunk); 1: a single token
      for (const T of [1, 7, 10]) {
        it(`${name}, batch ${B}, T=${T}: logits, states and later decoding match T decodeSteps`, () => {
          const cap = T + 3;
          const ids = tokens(B, T);
          const a = initDecodeState(model, B, cap);
          const b = initDecodeState(model, B, cap);
          expectSameResult(prefill(model, a, ids), stepAll(model, b, ids));
          expectSameStates(a, b);
          // generation continues from the prefilled state as from the stepped one
          const next = tokens(B, 3, 1);
          expectSameResult(stepAll(model, a, next), stepAll(model, b, next));
          expectSameStates(a, b);
        });
      }
      it(`${name}, batch ${B}: from a non-zero position (after steps and after a first prefill)`, () => {
        const first = tokens(B, 3, 2);
        const second = tokens(B, 6, 3);
        const third = tokens(B, 5, 4);
        const a = initDecodeState(model, B, 16);
        const b = initDecodeState(model, B, 16);
        stepAll(model, a, first);
        stepAll(model, b, first);
        expectSameResult(prefill(model, a, second), stepAll(model, b, second));
        expectSameStates(a, b);
        const got = prefill(model, a, third, false);
        const want = stepAll(model, b, third);
        expect(got.logits.length).toBe(1);
        expectSameResult(got, { readouts: want.readouts, logits: want.logits.slice(-1) });
        expectSameStates(a, b);
      });
    }
  }

  it("allSteps = false returns the last step's logits only, all steps' readouts", () => {
    const model = new LoopedModel(configs.hybrid, { seed: 1 });
    const res = prefill(model, initDecodeState(model, 2, 8), tokens(2, 5), false);
    expect(res.readouts.map((r) => r.shape)).toEqual(Array(R).fill([2, 16]));
    expect(res.logits.map((l) => l.shape)).toEqual([[2, 11]]);
  });

  it("rejects a wrong batch, ragged or empty prompts, bad tokens and an overfull state", () => {
    const model = new LoopedModel(configs.hybrid, { seed: 1 });
    const st = initDecodeState(model, 2, 6);
    expect(() => prefill(model, st, tokens(3, 4))).toThrow(
      "prefill: expected 2 sequences of token ids, got 3",
    );
    expect(() => prefill(model, st, [[], []])).toThrow(
      "prefill: the prompt must contain at least one token",
    );
    expect(() => prefill(model, st, [[1, 2], [3]])).toThrow(
      "prefill: every sequence needs the same number of tokens; sequence 0 has 2, sequence 1 has 1",
    );
    expect(() =>
      prefill(model, st, [
        [1, 11],
        [3, 4],
      ]),
    ).toThrow("prefill: token 11 (sequence 0, position 1) is outside [0, 11)");
    expect(() => prefill(model, st, tokens(2, 7))).toThrow(
      "prefill: 7 token(s) at position 0 exceed the decode capacity 6",
    );
    // a refused call leaves the state untouched
    expect(st.position).toBe(0);
    prefill(model, st, tokens(2, 4));
    expect(() => prefill(model, st, tokens(2, 3))).toThrow(
      "prefill: 3 token(s) at position 4 exceed the decode capacity 6",
    );
    expect(st.position).toBe(4);
  });
});
