/**
 * Hugging Face Mamba-2 folders as transformers writes them (hf-folder.test-util.ts): they load,
 * compute looplm's own model bit for bit, honour time_step_limit and the norm grouping, refuse
 * what looplm does not compute by name, warn about unknown fields in one line; and a looplm
 * model exported as such a folder reads back to the same numbers.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { intTensor, noGrad } from "@loop/tensor";
import { readSafetensorsFile } from "@loop/tensor/node";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../config.js";
import { HF_MAMBA2_FIELDS } from "../hf-config.js";
import { LoopedModel } from "../model.js";
import { parsePythonJson } from "../python-json.js";
import { stateDict } from "../state-dict.js";
import { loadCheckpoint, saveCheckpoint, saveHfCheckpoint } from "./checkpoint-files.js";
import {
  HF_CONFIG_TEXT,
  HF_EQUIVALENT,
  hfModel,
  tmpFolder,
  writeHfFolder,
} from "./hf-folder.test-util.js";

const tokens = intTensor([1, 4, 2, 8, 0, 3, 5, 7, 6, 2, 2, 1], [2, 6]);
const logits = (m: LoopedModel): number[] =>
  Array.from(noGrad(() => m.forward(tokens)).logits[0]!.data);

/** Load `dir`, collecting its notices. */
function load(dir: string): { model: LoopedModel; notes: string[] } {
  const notes: string[] = [];
  const model = loadCheckpoint(dir, { onNote: (l) => notes.push(l) });
  return { model, notes };
}

/** HF_CONFIG_TEXT with the time_step_limit block replaced by `[lo, hi]` as Python writes it. */
const withLimit = (lo: string, hi: string) =>
  HF_CONFIG_TEXT.replace(
    '"time_step_limit": [\n    0.0,\n    Infinity\n  ]',
    `"time_step_limit": [\n    ${lo},\n    ${hi}\n  ]`,
  );

/** HF_CONFIG_TEXT with `"key": value` set (an existing line replaced, or a new one first). */
function withField(key: string, json: string): string {
  const line = new RegExp(`\\n  "${key}": [^\\n]*?(,?)\\n`);
  if (line.test(HF_CONFIG_TEXT))
    return HF_CONFIG_TEXT.replace(line, (_m, comma) => `\n  "${key}": ${json}${comma}\n`);
  return HF_CONFIG_TEXT.replace("{\n", `{\n  "${key}": ${json},\n`);
}

describe("a Hugging Face Mamba-2 folder as transformers writes it", () => {
  const own = hfModel();

  it("loads (bare Infinity) and computes looplm's own model bit for bit", () => {
    expect(HF_CONFIG_TEXT).toContain("Infinity");
    const { model, notes } = load(writeHfFolder(own, HF_CONFIG_TEXT));
    expect(model.config).toEqual(HF_EQUIVALENT);
    const ownDir = tmpFolder();
    saveCheckpoint(ownDir, own);
    expect(logits(model)).toEqual(logits(loadCheckpoint(ownDir)));
    // n_groups 2: one line says which grouping the norm uses
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /n_groups = 2; the gated norm takes its RMS per group of 16 channels \(mamba_ssm/,
    );
  });

  it("honours time_step_limit: dt clamped after the softplus, as in a looplm config", () => {
    const dir = writeHfFolder(own, withLimit("0.0", "0.01"));
    const { model } = load(dir);
    expect(model.config.ssm.time_step_limit).toEqual([0, 0.01]);
    const clamped = logits(model);
    expect(clamped).not.toEqual(logits(own));
    const same = hfModel({ time_step_limit: [0, 0.01] });
    expect(clamped).toEqual(logits(same));
    expect(() => load(writeHfFolder(own, withLimit("0.5", "0.1")))).toThrow(
      /config.json: Hugging Face mamba2 config: time_step_limit must be \[lo, hi\] with 0 ≤ lo ≤ hi/,
    );
  });

  it('selects transformers\' PyTorch-path grouping with "norm_groups": "whole", and says so', () => {
    const { model, notes } = load(writeHfFolder(own, withField("norm_groups", '"whole"')));
    expect(model.config.ssm.norm_groups).toBe("whole");
    expect(notes).toEqual([
      expect.stringMatching(/RMS over all 32 channels of d_inner \("norm_groups": "whole"/),
    ]);
    const whole = logits(model);
    expect(whole).not.toEqual(logits(own));
    expect(whole).toEqual(logits(hfModel({ norm_groups: "whole" })));
  });

  it("refuses, by name, every setting looplm does not compute", () => {
    const refused: [string, string, RegExp][] = [
      [
        "hidden_act",
        '"gelu"',
        /"hidden_act" = "gelu" is not supported \(looplm's mixer applies silu/,
      ],
      ["use_bias", "true", /"use_bias" = true is not supported/],
      ["use_conv_bias", "false", /"use_conv_bias" = false is not supported/],
      ["rms_norm", "false", /"rms_norm" = false is not supported/],
      ["norm_before_gate", "true", /"norm_before_gate" = true is not supported/],
      ["residual_in_fp32", '"yes"', /"residual_in_fp32" must be true or false/],
      ["norm_groups", '"pairs"', /"norm_groups" must be one of "per_group", "whole"/],
      ["num_heads", "3", /num_heads 3 ≠ expand·hidden_size\/head_dim = 4/],
      // sizes and epsilon are named as the config spells them, non-finite values as Python does
      ["layer_norm_epsilon", "NaN", /: layer_norm_epsilon must be a positive number, got NaN$/],
      ["state_size", "0", /: state_size must be a positive integer, got 0$/],
      ["conv_kernel", "Infinity", /: conv_kernel must be a positive integer, got Infinity$/],
      ["tie_word_embeddings", '"no"', /: "tie_word_embeddings" must be true or false, got "no"$/],
    ];
    for (const [key, json, msg] of refused)
      expect(() => load(writeHfFolder(own, withField(key, json))), key).toThrow(msg);
    // "swish" is transformers' other name for silu; residual_in_fp32 false is the same in float32
    expect(logits(load(writeHfFolder(own, withField("hidden_act", '"swish"'))).model)).toEqual(
      logits(own),
    );
    expect(logits(load(writeHfFolder(own, withField("residual_in_fp32", "false"))).model)).toEqual(
      logits(own),
    );
  });

  it("names the fields transformers does not define in one warning line; init-only ones pass", () => {
    const text = withField("foo_size", "3").replace("{\n", '{\n  "bar": [\n    1\n  ],\n');
    const { notes } = load(writeHfFolder(own, text));
    expect(notes.filter((n) => n.includes("ignoring"))).toEqual([
      expect.stringMatching(
        /config.json: ignoring fields transformers' Mamba2Config does not define: bar, foo_size$/,
      ),
    ]);
    // time_step_min/max/floor, time_step_rank, initializer_range…: no warning, no effect
    const init = withField("time_step_min", "0.5").replace(
      '"time_step_rank": 1',
      '"time_step_rank": 7',
    );
    const r = load(writeHfFolder(own, init));
    expect(r.notes.some((n) => n.includes("ignoring"))).toBe(false);
    expect(logits(r.model)).toEqual(logits(own));
  });

  it("says so when an untied config comes without lm_head.weight (the head is tied)", () => {
    const text = HF_CONFIG_TEXT.replace(
      '"tie_word_embeddings": true',
      '"tie_word_embeddings": false',
    );
    const { model, notes } = load(writeHfFolder(own, text));
    expect(model.config.tie_embeddings).toBe(true);
    expect(notes).toContainEqual(
      expect.stringMatching(
        /"tie_word_embeddings" is false but model.safetensors has no lm_head.weight/,
      ),
    );
  });

  it("takes transformers' default for a missing field", () => {
    const text = HF_CONFIG_TEXT.replace('  "chunk_size": 4,\n', "");
    expect(load(writeHfFolder(own, text)).model.config.ssm.chunk_size).toBe(256);
    const noGroups = HF_CONFIG_TEXT.replace('  "n_groups": 2,\n', "");
    // (transformers' default is 8 groups, which 4 heads cannot hold)
    expect(() => load(writeHfFolder(own, noGroups))).toThrow(/n_groups \(8\) must divide/);
  });
});

describe("a looplm model exported as a Hugging Face folder", () => {
  for (const [what, ssm, tied] of [
    ["tied, per-group norm, no dt limit", {}, true],
    [
      "untied, whole-Di norm, a dt limit",
      { norm_groups: "whole", time_step_limit: [0.001, 0.05] },
      false,
    ],
  ] as const)
    it(`has every Mamba2Config field and reads back bit for bit (${what})`, () => {
      const m = new LoopedModel(
        parseConfig({
          ...HF_EQUIVALENT,
          tie_embeddings: tied,
          ssm: { ...HF_EQUIVALENT.ssm, ...ssm },
        }),
        { seed: 11 },
      );
      const dir = tmpFolder();
      saveHfCheckpoint(dir, m);
      const text = readFileSync(join(dir, "config.json"), "utf8");
      const raw = parsePythonJson(text) as Record<string, unknown>;
      const keys = Object.keys(raw);
      expect(keys).toEqual([...keys].sort());
      for (const k of HF_MAMBA2_FIELDS.filter(
        (f) =>
          !["norm_before_gate", "dtype", "transformers_version"].includes(f) &&
          !/token|^_|auto_map|tokenizer/.test(f),
      ))
        expect(raw, k).toHaveProperty(k);
      expect(raw.model_type).toBe("mamba2");
      expect(raw.architectures).toEqual(["Mamba2ForCausalLM"]);
      expect(raw.num_heads).toBe(4);
      if (tied) expect(text).toMatch(/"time_step_limit": \[\n {4}0,\n {4}Infinity\n {2}\]/);
      const names = [...readSafetensorsFile(join(dir, "model.safetensors")).tensors.keys()];
      expect(names.includes("lm_head.weight")).toBe(!tied);
      const { model: back } = load(dir);
      expect(back.config).toEqual(m.config);
      const want = stateDict(m);
      for (const [name, t] of stateDict(back)) expect(t.data, name).toEqual(want.get(name)!.data);
      expect(logits(back)).toEqual(logits(m));
    });

  it("refuses a looped, normed-loop or exit-gated model by name", () => {
    const looped = new LoopedModel(
      parseConfig({ ...HF_EQUIVALENT, n_loops: 2, loop_norm: true, exit_gate: true }),
    );
    expect(() => saveHfCheckpoint(tmpFolder(), looped)).toThrow(
      /holds a plain Mamba-2 model; this one has n_loops 2 \(only 1\), loop_norm, exit_gate/,
    );
  });
});
