import { Rng } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { parseConfig } from "./config.js";
import { decodeStep, initDecodeState, sampleToken } from "./decode.js";
import { decodeStepEarlyExit } from "./decode-early-exit.js";
import { type GenerateOptions, generate, type StepPolicy } from "./generate.js";
import { LoopedModel } from "./model.js";

const cfg = parseConfig({
  vocab_size: 13,
  d_model: 16,
  n_layers: 2,
  n_loops: 3,
  exit_gate: true,
  backbone: "hybrid",
  attn_layers: [1],
  ssm: { d_state: 4, headdim: 8, expand: 2, n_groups: 1, d_conv: 3, chunk_size: 4 },
  attention: { n_heads: 4, n_kv_heads: 2 },
});
const prompt = [1, 5, 2, 7];

const generateEarlyExit = (
  m: LoopedModel,
  p: number[],
  o: Omit<GenerateOptions, "policy"> & Omit<Extract<StepPolicy, { kind: "threshold" }>, "kind">,
) => {
  const { q, maxStep, skipped, fullPrompt, ...rest } = o;
  return generate(m, p, {
    ...rest,
    policy: { kind: "threshold", q, maxStep, skipped, fullPrompt },
  });
};

describe("generate with a threshold policy", () => {
  it("q = 1 generates exactly what generate does (greedy and sampled)", () => {
    const m = new LoopedModel(cfg, { seed: 2 });
    for (const temperature of [0, 0.8]) {
      const opts = { maxNewTokens: 6, temperature, topK: 5, seed: 9 };
      const res = generateEarlyExit(m, prompt, { ...opts, q: 1 });
      expect(res.tokens).toEqual(generate(m, prompt, opts).tokens);
      expect(res.exitSteps).toEqual(Array(prompt.length + 5).fill(3));
      expect(res.counts).toEqual({
        tokens: prompt.length + 5,
        layersRun: (prompt.length + 5) * 3 * 2,
        layersSkipped: 0,
        kvPropagated: 0,
        ssmPropagated: 0,
      });
    }
  });

  it("q = 0 runs one step per token; fullPrompt runs the prompt through every step", () => {
    const m = new LoopedModel(cfg, { seed: 3 });
    const fed = prompt.length + 3;
    const res = generateEarlyExit(m, prompt, { maxNewTokens: 4, temperature: 0, q: 0 });
    expect(res.tokens.length).toBe(4);
    expect(res.exitSteps).toEqual(Array(fed).fill(1));
    expect(res.counts).toEqual({
      tokens: fed,
      layersRun: fed * 2,
      layersSkipped: fed * 2 * 2,
      kvPropagated: fed * 2,
      ssmPropagated: 0,
    });
    const fp = generateEarlyExit(m, prompt, {
      maxNewTokens: 4,
      temperature: 0,
      q: 0,
      fullPrompt: true,
    });
    expect(fp.exitSteps).toEqual([3, 3, 3, 3, 1, 1, 1]);
    expect(fp.counts.layersRun).toBe(4 * 3 * 2 + 3 * 2);
    expect(fp.counts.layersSkipped).toBe(3 * 2 * 2);
    // The first generated token comes from the same full-depth prompt pass as generate's.
    expect(fp.tokens[0]).toBe(generate(m, prompt, { maxNewTokens: 1, temperature: 0 }).tokens[0]);
  });

  it("stops at the stop token and rejects bad options", () => {
    const m = new LoopedModel(cfg, { seed: 4 });
    const first = generateEarlyExit(m, prompt, { maxNewTokens: 5, temperature: 0, q: 0.5 })
      .tokens[0]!;
    const res = generateEarlyExit(m, prompt, {
      maxNewTokens: 5,
      temperature: 0,
      q: 0.5,
      stopToken: first,
    });
    expect(res.tokens).toEqual([first]);
    expect(() => generateEarlyExit(m, [], { maxNewTokens: 1, q: 0.5 })).toThrow(
      /prompt must contain/,
    );
    expect(() => generateEarlyExit(m, [99], { maxNewTokens: 1, q: 0.5 })).toThrow(
      /prompt token 99 is outside \[0, 13\)/,
    );
    expect(() => generateEarlyExit(m, prompt, { maxNewTokens: 1, q: 2 })).toThrow(/q must be in/);
    const plain = new LoopedModel({ ...cfg, exit_gate: false });
    expect(() => generateEarlyExit(plain, prompt, { maxNewTokens: 1, q: 1 })).toThrow(
      /no exit gate/,
    );
  });
});

describe("generate with the full and fixed policies", () => {
  it("full depth counts R steps per token; fixed step k is the loop truncated to k (no gate needed)", () => {
    const plain = new LoopedModel({ ...cfg, exit_gate: false }, { seed: 5 });
    const full = generate(plain, prompt, { maxNewTokens: 3, temperature: 0 });
    expect(full.exitSteps).toEqual(Array(prompt.length + 2).fill(3));
    expect(full.counts.layersRun).toBe((prompt.length + 2) * 3 * 2);
    expect(
      generate(plain, prompt, {
        maxNewTokens: 3,
        temperature: 0,
        policy: { kind: "fixed", step: 3 },
      }).tokens,
    ).toEqual(full.tokens);
    const fixed = generate(plain, prompt, {
      maxNewTokens: 3,
      temperature: 0,
      policy: { kind: "fixed", step: 2 },
    });
    expect(fixed.exitSteps).toEqual(Array(prompt.length + 2).fill(2));
    expect(fixed.counts.layersSkipped).toBe((prompt.length + 2) * 2);
    // The first token: greedy on logits(2) of full decoding of the prompt.
    const st = initDecodeState(plain, 1, prompt.length);
    let logits2: Float32Array = new Float32Array(0);
    for (const t of prompt) logits2 = decodeStep(plain, st, [t]).logits[1]!.data;
    let best = 0;
    for (let j = 1; j < logits2.length; j++) if (logits2[j]! > logits2[best]!) best = j;
    expect(fixed.tokens[0]).toBe(best);
    expect(() =>
      generate(plain, prompt, { maxNewTokens: 1, policy: { kind: "fixed", step: 4 } }),
    ).toThrow(/maxStep must be an integer in \[1, 3\], got 4/);
    expect(() =>
      generate(plain, prompt, { maxNewTokens: 1, policy: { kind: "threshold", q: 0.5 } }),
    ).toThrow(/generate: the model has no exit gate/);
  });
});

describe("generate's prefilled prompt", () => {
  it("gives the tokens of feeding the prompt one decodeStep at a time (greedy and sampled)", () => {
    // a prompt longer than two chunks (chunk_size 4), ending mid-chunk
    const long = [1, 5, 2, 7, 0, 12, 3, 3, 9, 4, 6];
    const m = new LoopedModel({ ...cfg, exit_gate: false }, { seed: 6 });
    for (const temperature of [0, 0.9]) {
      const opts = { maxNewTokens: 5, temperature, topK: 6, seed: 3 };
      const rng = new Rng(3);
      const st = initDecodeState(m, 1, long.length + opts.maxNewTokens);
      let logits = decodeStep(m, st, [long[0]!], false).logits[0]!;
      for (const t of long.slice(1)) logits = decodeStep(m, st, [t], false).logits[0]!;
      const want: number[] = [];
      for (let i = 0; i < opts.maxNewTokens; i++) {
        want.push(sampleToken(logits.data, temperature, opts.topK, rng));
        logits = decodeStep(m, st, [want[i]!], false).logits[0]!;
      }
      const res = generate(m, long, opts);
      expect(res.tokens).toEqual(want);
      expect(res.exitSteps).toEqual(Array(long.length + 4).fill(3));
    }
  });
});

describe("generate's early-exit prompt", () => {
  it("gives the tokens and exit steps of feeding it one decodeStepEarlyExit at a time", () => {
    const long = [1, 5, 2, 7, 0, 12, 3, 3, 9, 4, 6];
    const m = new LoopedModel(cfg, { seed: 7 });
    const g = m.exitGate!;
    for (let d = 0; d < g.weight.size; d++) g.weight.data[d]! *= 6; // spread the exits
    for (const skipped of ["carry", "propagate"] as const) {
      const early = { q: 0.5, skipped };
      const st = initDecodeState(m, 1, long.length + 4);
      const wantSteps: number[] = [];
      let logits = decodeStepEarlyExit(m, st, [long[0]!], early);
      wantSteps.push(logits.exitSteps[0]!);
      for (const t of long.slice(1)) {
        logits = decodeStepEarlyExit(m, st, [t], early);
        wantSteps.push(logits.exitSteps[0]!);
      }
      const want: number[] = [];
      for (let i = 0; i < 4; i++) {
        want.push(sampleToken(logits.logits.data, 0, 0, new Rng(0)));
        if (i === 3) break;
        logits = decodeStepEarlyExit(m, st, [want[i]!], early);
        wantSteps.push(logits.exitSteps[0]!);
      }
      const res = generateEarlyExit(m, long, { maxNewTokens: 4, temperature: 0, ...early });
      expect(res.tokens).toEqual(want);
      expect(res.exitSteps).toEqual(wantSteps);
      expect(new Set(res.exitSteps.slice(0, long.length)).size).toBeGreaterThan(1);
    }
  });
});
