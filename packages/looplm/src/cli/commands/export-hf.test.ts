/**
 * `looplm export-hf` and the commands that read a Hugging Face folder: a golden checkpoint
 * exported, then `looplm forward` on the exported folder (its config.json spells the default
 * time_step_limit with a bare Infinity, as transformers does) writes the same bits as on the
 * original; a looped model and a non-empty --out are refused with one line; `--config` takes a
 * Hugging Face config.json as Python writes it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSafetensorsFile } from "@loop/tensor/node";
import { goldenPath } from "@loop/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildModelConfig, MODEL_DEFAULTS } from "../options/model.js";
import { run as runInProcess } from "../run-in-process.test-util.js";

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-hf-"));

/** Run the CLI in-process; returns what it wrote to standard error. */
const run = async (...args: string[]): Promise<string> => (await runInProcess(...args)).err;

afterEach(() => vi.restoreAllMocks());

describe("looplm export-hf", () => {
  it("exports a plain Mamba-2 checkpoint; forward on the folder gives the same bits", async () => {
    const src = goldenPath("mamba-1x1");
    const out = join(tmp(), "hf");
    expect(await run("export-hf", "--model", src, "--out", out)).toMatch(/wrote .*config\.json/);
    const text = readFileSync(join(out, "config.json"), "utf8");
    expect(text).toMatch(/"model_type": "mamba2"/);
    expect(text).toMatch(/\n {4}Infinity\n/);
    const outputs = (model: string) => {
      const file = join(tmp(), "o.safetensors");
      return run(
        "forward",
        "--backend",
        "portable",
        "--model",
        model,
        "--input",
        join(src, "inputs.json"),
        "--out",
        file,
      ).then(() => readSafetensorsFile(file).tensors);
    };
    const [a, b] = [await outputs(src), await outputs(out)];
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [k, t] of a) expect(b.get(k)!.data, k).toEqual(t.data);
  });

  it("refuses a looped model and a non-empty --out with one line each", async () => {
    await expect(
      run("export-hf", "--model", goldenPath("mamba-2x3"), "--out", join(tmp(), "x")),
    ).rejects.toThrow(/plain Mamba-2 model; this one has n_loops 3 \(only 1\)/);
    const full = tmp();
    writeFileSync(join(full, "keep.txt"), "x");
    await expect(
      run("export-hf", "--model", goldenPath("mamba-1x1"), "--out", full),
    ).rejects.toThrow(/is not empty/);
  });

  it("names what an --out that is not a folder is", async () => {
    await expect(
      run("export-hf", "--model", goldenPath("mamba-1x1"), "--out", "/dev/null"),
    ).rejects.toThrow(/^--out \/dev\/null is a character device, not a folder$/);
    const file = join(tmp(), "f.json");
    writeFileSync(file, "{}");
    await expect(
      run("export-hf", "--model", goldenPath("mamba-1x1"), "--out", file),
    ).rejects.toThrow(/is a file, not a folder$/);
  });
});

describe("--config with a Hugging Face config.json", () => {
  it("reads bare Infinity and means the same model", () => {
    const file = join(tmp(), "config.json");
    writeFileSync(
      file,
      '{\n  "chunk_size": 64,\n  "conv_kernel": 4,\n  "expand": 2,\n  "head_dim": 16,\n  "hidden_act": "silu",\n  "hidden_size": 32,\n  "model_type": "mamba2",\n  "n_groups": 1,\n  "num_heads": 4,\n  "num_hidden_layers": 2,\n  "state_size": 16,\n  "tie_word_embeddings": true,\n  "time_step_limit": [\n    0.0,\n    Infinity\n  ],\n  "vocab_size": 40\n}\n',
    );
    const cfg = buildModelConfig({ ...MODEL_DEFAULTS, config: file }, 40);
    expect(cfg.d_model).toBe(32);
    expect(cfg.n_layers).toBe(2);
    expect(cfg.ssm.time_step_limit).toBeUndefined();
    writeFileSync(file, readFileSync(file, "utf8").replace('"silu"', '"gelu"'));
    expect(() => buildModelConfig({ ...MODEL_DEFAULTS, config: file }, 40)).toThrow(
      /"hidden_act" = "gelu" is not supported/,
    );
  });
});
