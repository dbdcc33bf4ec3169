/*
 * Checkpoint folders (docs/formats.md): `config.json` + `model.safetensors`, written atomically
 * (temporary file, then rename) and loaded strictly. A Hugging Face Mamba2ForCausalLM folder
 * (model_type "mamba2") loads as a 1-loop looplm model without renaming.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { NamedArray } from "@loop/tensor";
import {
  readJsonFile,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from "@loop/tensor/node";
import { configToJson, type ModelConfig, parseConfig } from "../config.js";
import { fromHfMamba2Config, isHfMamba2Config } from "../hf-config.js";
import { LoopedModel } from "../model.js";
import { loadStateDict, stateDict } from "../state-dict.js";

/**
 * Write `model` to the folder `dir` as `config.json` + `model.safetensors` (docs/formats.md), each
 * file written atomically; `metadata` goes into the safetensors header.
 */
export function saveCheckpoint(
  dir: string,
  model: LoopedModel,
  metadata?: Record<string, string>,
): void {
  mkdirSync(dir, { recursive: true });
  writeSafetensorsFile(join(dir, "model.safetensors"), stateDict(model), {
    format: "pt",
    ...metadata,
  });
  writeFileAtomic(join(dir, "config.json"), configToJson(model.config));
}

/**
 * Read a checkpoint folder written by `saveCheckpoint` (or a Hugging Face `Mamba2ForCausalLM`
 * folder) into a new `LoopedModel`; F16/BF16 weights widen to float32; errors name the file.
 */
export function loadCheckpoint(dir: string): LoopedModel {
  if (!existsSync(dir)) throw new Error(`checkpoint folder ${dir} does not exist`);
  const cfgPath = join(dir, "config.json");
  const weightsPath = join(dir, "model.safetensors");
  const raw = readJsonFile(cfgPath);
  const configError = (e: unknown) => new Error(`${cfgPath}: ${(e as Error).message}`);
  let config: ModelConfig;
  let weights: Map<string, NamedArray>;
  if (isHfMamba2Config(raw)) {
    // HF pads the vocabulary and may omit a tied head: read both off the weights.
    weights = readSafetensorsFile(weightsPath).tensors;
    const emb = weights.get("backbone.embeddings.weight");
    try {
      config = fromHfMamba2Config(raw as Record<string, unknown>, {
        vocabSize: emb?.shape[0],
        tied: !weights.has("lm_head.weight") || undefined,
      });
    } catch (e) {
      throw configError(e);
    }
  } else {
    try {
      config = parseConfig(raw);
    } catch (e) {
      throw configError(e);
    }
    weights = readSafetensorsFile(weightsPath).tensors;
  }
  const model = new LoopedModel(config);
  loadStateDict(model, weights, weightsPath);
  return model;
}
