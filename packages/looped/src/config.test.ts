import { readFileSync } from "node:fs";
import { goldenPath } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { configToJson, makeConfig, parseConfig } from "./config.js";
import { parsePythonJson } from "./python-json.js";

const base = { backbone: "mamba", vocab_size: 32, d_model: 64, n_layers: 2 } as const;

describe("config", () => {
  it("fills every default of docs/formats.md", () => {
    const c = parseConfig(base);
    expect(c).toEqual({
      ...base,
      n_loops: 1,
      loop_norm: false,
      norm_eps: 1e-5,
      tie_embeddings: true,
      ssm: { d_state: 16, headdim: 16, expand: 2, n_groups: 1, d_conv: 4, chunk_size: 64 },
      attention: { n_heads: 4, n_kv_heads: 4, rope_theta: 10000 },
      attn_layers: [],
      mlp: null,
      exit_gate: false,
    });
    expect(parseConfig(JSON.parse(configToJson(c)))).toEqual(c);
    expect(parseConfig({ ...base, ssm: { d_state: 8 } }).ssm.headdim).toBe(16);
  });
  it("parses every golden config", () => {
    for (const name of [
      "mamba-1x1",
      "mamba-2x3",
      "hybrid-3x2",
      "transformer-2x2",
      "mamba-2x2-gate",
      "mamba-1x4-loopnorm-gate",
      "mamba-2x1-hf-settings",
    ]) {
      const raw = JSON.parse(readFileSync(goldenPath(name, "config.json"), "utf8"));
      expect(parseConfig(raw)).toEqual(raw);
    }
  });
  it("names the key and the allowed values in errors", () => {
    expect(() => parseConfig({ ...base, backbone: "rnn" })).toThrow(
      /backbone must be one of "mamba", "hybrid", "transformer", got "rnn"/,
    );
    expect(() => parseConfig({ ...base, n_loops: 0 })).toThrow(
      /n_loops must be a positive integer, got 0/,
    );
    expect(() => parseConfig({ ...base, attn_layers: [0] })).toThrow(
      /attn_layers is only allowed with backbone "hybrid"/,
    );
    expect(() => parseConfig({ ...base, backbone: "hybrid", attn_layers: [2] })).toThrow(
      /attn_layers\[0\] must be a layer index in 0..1, got 2/,
    );
    const transformerWith = (attention: { n_heads?: number; n_kv_heads?: number }) => () =>
      parseConfig({ ...base, backbone: "transformer", mlp: { d_ff: 8 }, attention });
    expect(transformerWith({ n_heads: 5 })).toThrow(/n_heads \(5\) must divide d_model \(64\)/);
    expect(transformerWith({ n_kv_heads: 3 })).toThrow(
      /n_kv_heads \(3\) must divide attention.n_heads \(4\)/,
    );
    expect(() => parseConfig({ ...base, backbone: "transformer" })).toThrow(/mlp .* is required/);
    expect(() => parseConfig({ ...base, ssm: { headdim: 48 } })).toThrow(
      /headdim \(48\) must divide d_inner/,
    );
    expect(() => parseConfig({ ...base, ssm: { n_groups: 3 } })).toThrow(
      /n_groups \(3\) must divide the head count 8/,
    );
    expect(() => parseConfig({ ...base, dmodel: 3 })).toThrow(/unknown key "dmodel"/);
    expect(() => parseConfig({ ...base, ssm: { chunk: 3 } })).toThrow(/unknown key "ssm.chunk"/);
    expect(() => parseConfig({ ...base, norm_eps: -1 })).toThrow(
      /norm_eps must be a positive number/,
    );
    expect(() => parseConfig({ ...base, tie_embeddings: "yes" })).toThrow(
      /tie_embeddings must be true or false/,
    );
    expect(() => parseConfig([])).toThrow(/config must be an object/);
  });
  it("reads and writes ssm.time_step_limit (Infinity bare) and ssm.norm_groups", () => {
    const c = parseConfig({
      ...base,
      ssm: {
        n_groups: 2,
        time_step_limit: [0.001, Number.POSITIVE_INFINITY],
        norm_groups: "whole",
      },
    });
    expect(c.ssm.time_step_limit).toEqual([0.001, Number.POSITIVE_INFINITY]);
    expect(c.ssm.norm_groups).toBe("whole");
    const text = configToJson(c);
    expect(text).toMatch(/"time_step_limit": \[\n {6}0\.001,\n {6}Infinity\n {4}\]/);
    expect(parseConfig(parsePythonJson(text))).toEqual(c);
    // the defaults stay implicit: a config at the defaults has neither key
    const d = parseConfig({
      ...base,
      ssm: { time_step_limit: [0, Number.POSITIVE_INFINITY], norm_groups: "per_group" },
    });
    expect(d).toEqual(parseConfig(base));
    expect(configToJson(d)).toBe(configToJson(parseConfig(base)));
    // JSON.stringify's null for Infinity (run.json, queue jobs) reads as Infinity
    const viaJson = parseConfig(JSON.parse(JSON.stringify(c)));
    expect(viaJson.ssm.time_step_limit).toEqual([0.001, Number.POSITIVE_INFINITY]);
    for (const bad of [[0.1], [0.2, 0.1], [-1, 1], [0, Number.NaN], [null, 1], "0,1"])
      expect(() => parseConfig({ ...base, ssm: { time_step_limit: bad } }), String(bad)).toThrow(
        /ssm.time_step_limit must be \[lo, hi\] with 0 ≤ lo ≤ hi/,
      );
    expect(() => parseConfig({ ...base, ssm: { norm_groups: "pairs" } })).toThrow(
      /ssm.norm_groups must be one of "per_group", "whole", got "pairs"/,
    );
  });
  it("makeConfig accepts a partial config", () => {
    expect(makeConfig({ ...base, n_loops: 4 }).n_loops).toBe(4);
  });
});
