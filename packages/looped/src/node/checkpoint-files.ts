/*
 * Checkpoint folders (docs/formats.md): `config.json` + `model.safetensors`, written atomically
 * (temporary file, then rename) and loaded strictly. A Hugging Face Mamba2ForCausalLM folder
 * (model_type "mamba2") loads as a 1-loop looplm model without renaming, and a plain Mamba-2
 * model saves as one (saveHfCheckpoint). config.json is read as Python's json module writes it
 * (bare Infinity, NaN: transformers' files).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { NamedArray } from "@loop/tensor";
import {
  inputFileExists,
  makeDirectory,
  readInputText,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from "@loop/tensor/node";
import { configToJson, type ModelConfig, parseConfig } from "../config.js";
import { fromHfMamba2Config, isHfMamba2Config, toHfMamba2Config } from "../hf-config.js";
import { LoopedModel, type ModelOptions } from "../model.js";
import { parsePythonJson, pythonJson } from "../python-json.js";
import { loadStateDict, stateDict } from "../state-dict.js";

/**
 * Read a model folder's config.json (or a --config file) as Python's json module writes it;
 * errors name the file and whether it was missing or malformed.
 */
export function readModelJson(path: string): unknown {
  // (by the one input rule: only a regular file, never opened blocking, and UTF-8)
  if (!inputFileExists(path)) throw new Error(`${path} does not exist`);
  const text = readInputText(path);
  try {
    return parsePythonJson(text);
  } catch (e) {
    throw new Error(`${path} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Options of loadCheckpoint. */
export interface LoadCheckpointOptions extends Pick<ModelOptions, "mixer"> {
  /**
   * Receives the one-line notices of a Hugging Face folder (fields it ignores, the norm grouping
   * with n_groups > 1); default: standard error.
   */
  onNote?: (line: string) => void;
}

/**
 * Save a plain Mamba-2 model (R = 1, no loop norm, no exit gate) as a Hugging Face
 * Mamba2ForCausalLM folder: config.json with every Mamba2Config field (toHfMamba2Config;
 * Infinity bare, keys sorted, as transformers writes it) and model.safetensors under the same
 * names (a tied head has no lm_head.weight, as transformers saves it). loadCheckpoint reads it
 * back to the same numbers.
 */
export function saveHfCheckpoint(dir: string, model: LoopedModel): void {
  const config = toHfMamba2Config(model.config);
  makeDirectory(dir);
  writeSafetensorsFile(join(dir, "model.safetensors"), stateDict(model), { format: "pt" });
  writeFileAtomic(join(dir, "config.json"), `${pythonJson(config)}\n`);
}

/**
 * Write `model` to the folder `dir` as `config.json` + `model.safetensors` (docs/formats.md), each
 * file written atomically; `metadata` goes into the safetensors header.
 */
export function saveCheckpoint(
  dir: string,
  model: LoopedModel,
  metadata?: Record<string, string>,
): void {
  makeDirectory(dir);
  writeSafetensorsFile(join(dir, "model.safetensors"), stateDict(model), {
    format: "pt",
    ...metadata,
  });
  writeFileAtomic(join(dir, "config.json"), configToJson(model.config));
}

/**
 * Read a checkpoint folder written by `saveCheckpoint` (or a Hugging Face `Mamba2ForCausalLM`
 * folder) into a new `LoopedModel`; F16/BF16 weights widen to float32; errors name the file. A
 * model saved with custom mixers loads with the same `mixer` factory (ModelOptions.mixer).
 */
export function loadCheckpoint(dir: string, opts: LoadCheckpointOptions = {}): LoopedModel {
  if (!existsSync(dir)) throw new Error(`checkpoint folder ${dir} does not exist`);
  const cfgPath = join(dir, "config.json");
  const weightsPath = join(dir, "model.safetensors");
  const raw = readModelJson(cfgPath);
  const onNote = opts.onNote ?? ((line: string) => process.stderr.write(`${line}\n`));
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
        onNote: (line) => onNote(`${dir}/${line}`),
      });
    } catch (e) {
      throw configError(e);
    }
    // (transformers would start such a head from random weights: say what looplm does instead)
    if ((raw as Record<string, unknown>).tie_word_embeddings === false && config.tie_embeddings)
      onNote(
        `${cfgPath}: "tie_word_embeddings" is false but model.safetensors has no lm_head.weight: the head is tied to the embedding`,
      );
  } else {
    try {
      config = parseConfig(raw);
    } catch (e) {
      throw configError(e);
    }
    weights = readSafetensorsFile(weightsPath).tensors;
  }
  const model = new LoopedModel(config, { mixer: opts.mixer });
  loadStateDict(model, weights, weightsPath);
  return model;
}
