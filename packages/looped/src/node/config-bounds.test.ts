/**
 * A config is checked against its weights and against sane maxima before any model is built: an
 * edited n_layers, n_loops, num_hidden_layers, vocab_size or hidden_size is refused at once in
 * one line naming the file, the field and the fix (built first, they grew memory for ever or
 * ended in an error line of megabytes).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_CONFIG_SIZE, makeConfig } from "../config.js";
import { LoopedModel } from "../model.js";
import { loadCheckpoint, saveCheckpoint } from "./checkpoint-files.js";
import { HF_CONFIG_TEXT, hfModel, tmpFolder, writeHfFolder } from "./hf-folder.test-util.js";

/** A saved tiny looplm checkpoint whose config.json has `edit` applied. */
function edited(edit: (c: Record<string, unknown>) => void): string {
  const dir = join(tmpFolder(), "ck");
  saveCheckpoint(
    dir,
    new LoopedModel(
      makeConfig({
        backbone: "mamba",
        vocab_size: 12,
        d_model: 16,
        n_layers: 1,
        n_loops: 2,
        ssm: { d_state: 4, headdim: 8, chunk_size: 8 },
      }),
      { seed: 1 },
    ),
  );
  const p = join(dir, "config.json");
  const c = JSON.parse(readFileSync(p, "utf8"));
  edit(c);
  writeFileSync(p, JSON.stringify(c));
  return dir;
}

const hfWith = (key: string, value: string) =>
  writeHfFolder(
    hfModel(),
    HF_CONFIG_TEXT.replace(new RegExp(`"${key}": [^,\\n]*`), `"${key}": ${value}`),
  );

describe("a config is bounded before any model is built", () => {
  it("n_layers 1e8 and n_loops 1e9 are refused as more than any model holds", () => {
    const deep = edited((c) => (c.n_layers = 1e8));
    expect(() => loadCheckpoint(deep)).toThrow(
      `${join(deep, "config.json")}: config: n_layers 100000000 is more than any model holds (at most ${MAX_CONFIG_SIZE}); lower it`,
    );
    const looped = edited((c) => (c.n_loops = 1e9));
    expect(() => loadCheckpoint(looped)).toThrow(/n_loops 1000000000 is more than any model holds/);
    const many = edited((c) => (c.n_loops = 1e7));
    expect(() => loadCheckpoint(many)).toThrow(
      `${join(many, "config.json")}: config: n_loops 10000000 is more loop steps than any model runs (at most 65536: every token runs through each); lower it`,
    );
  });

  it("n_layers other than the weights' is refused in one line, before the model is built", () => {
    const dir = edited((c) => (c.n_layers = 3));
    expect(() => loadCheckpoint(dir)).toThrow(
      `${join(dir, "config.json")} gives n_layers 3, but ${join(dir, "model.safetensors")} holds 1 layer (backbone.layers.0–0): correct n_layers to 1, or use the config saved with these weights`,
    );
  });

  it("vocab_size other than the embedding's rows is refused", () => {
    const dir = edited((c) => (c.vocab_size = 64));
    expect(() => loadCheckpoint(dir)).toThrow(
      `${join(dir, "config.json")} gives vocab_size 64 and d_model 16, but backbone.embeddings.weight in ${join(dir, "model.safetensors")} is 12×16: correct config.json, or use the config saved with these weights`,
    );
  });

  it("a Hugging Face num_hidden_layers of 1e300 or 100000 is refused at once", () => {
    const huge = hfWith("num_hidden_layers", "1e300");
    expect(() => loadCheckpoint(huge)).toThrow(
      /num_hidden_layers 1e\+300 is more than any model holds \(at most 16777216\); lower it$/,
    );
    const deep = hfWith("num_hidden_layers", "100000");
    const err = (() => {
      try {
        loadCheckpoint(deep);
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(err).toBe(
      `${join(deep, "config.json")} gives num_hidden_layers 100000, but ${join(deep, "model.safetensors")} holds 2 layers (backbone.layers.0–1): correct num_hidden_layers to 2, or use the config saved with these weights`,
    );
  });

  it("a Hugging Face vocab_size above the embedding's rows is refused, not replaced by them", () => {
    const dir = hfWith("vocab_size", "64");
    expect(() => loadCheckpoint(dir)).toThrow(
      `${join(dir, "config.json")} gives vocab_size 64, but backbone.embeddings.weight in ${join(dir, "model.safetensors")} has 9 rows: correct vocab_size to 9, or use the config saved with these weights`,
    );
  });

  it("hidden_size NaN is named as hidden_size, not as num_heads", () => {
    const dir = hfWith("hidden_size", "NaN");
    expect(() => loadCheckpoint(dir)).toThrow(/hidden_size must be a positive integer, got NaN$/);
  });

  it('a Mamba-1 folder (model_type "mamba") is said to be one', () => {
    const dir = writeHfFolder(hfModel(), HF_CONFIG_TEXT.replace('"mamba2"', '"mamba"'));
    expect(() => loadCheckpoint(dir)).toThrow(
      `${join(dir, "config.json")} is a Hugging Face config of model_type "mamba" (Mamba-1): looplm loads Hugging Face Mamba-2 folders (model_type "mamba2") and its own checkpoints; convert the model to Mamba-2 or name another folder`,
    );
  });
});
