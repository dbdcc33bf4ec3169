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
  /**
   * Called with the config once it is read and checked against the weights, before the model is
   * built: throw to refuse it (a command's memory estimate).
   */
  checkConfig?: (config: ModelConfig) => void;
}

/**
 * Refuse, before any model is built, a config its weights contradict: the layers config.json
 * names against the `backbone.layers.N` the weights hold, and the embedding's shape against
 * vocab_size × d_model. (Built first, an edited `n_layers: 100000` took half a minute and ended
 * in an error line of 35 MB listing every missing tensor.)
 */
function checkAgainstWeights(
  config: ModelConfig,
  weights: Map<string, NamedArray>,
  cfgPath: string,
  weightsPath: string,
  names: { layers: string; vocab: string; d_model: string } = {
    layers: "n_layers",
    vocab: "vocab_size",
    d_model: "d_model",
  },
): void {
  let layers = 0;
  for (const k of weights.keys()) {
    const m = /^backbone\.layers\.(\d+)\./.exec(k);
    if (m) layers = Math.max(layers, Number(m[1]) + 1);
  }
  if (layers !== config.n_layers)
    throw new Error(
      `${cfgPath} gives ${names.layers} ${config.n_layers}, but ${weightsPath} holds ${layers} layer${layers === 1 ? "" : "s"} (backbone.layers.0–${layers - 1}): correct ${names.layers} to ${layers}, or use the config saved with these weights`,
    );
  const emb = weights.get("backbone.embeddings.weight");
  if (!emb) return; // (loadStateDict names it missing)
  const [rows, cols] = emb.shape;
  if (rows !== config.vocab_size || cols !== config.d_model)
    throw new Error(
      `${cfgPath} gives ${names.vocab} ${config.vocab_size} and ${names.d_model} ${config.d_model}, but backbone.embeddings.weight in ${weightsPath} is ${rows}×${cols}: correct config.json, or use the config saved with these weights`,
    );
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
  const modelType = (raw as Record<string, unknown> | null)?.model_type;
  if (modelType !== undefined && !isHfMamba2Config(raw))
    throw new Error(
      `${cfgPath} is a Hugging Face config of model_type ${JSON.stringify(modelType)}${modelType === "mamba" ? " (Mamba-1)" : ""}: looplm loads Hugging Face Mamba-2 folders (model_type "mamba2") and its own checkpoints; convert the model to Mamba-2 or name another folder`,
    );
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
    // (HF pads the vocabulary: the embedding may have more rows than vocab_size, never fewer)
    const said = (raw as Record<string, unknown>).vocab_size;
    if (typeof said === "number" && emb && said > emb.shape[0]!)
      throw new Error(
        `${cfgPath} gives vocab_size ${said}, but backbone.embeddings.weight in ${weightsPath} has ${emb.shape[0]} rows: correct vocab_size to ${emb.shape[0]}, or use the config saved with these weights`,
      );
    checkAgainstWeights(config, weights, cfgPath, weightsPath, {
      layers: "num_hidden_layers",
      vocab: "vocab_size (the embedding's rows)",
      d_model: "hidden_size",
    });
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
    checkAgainstWeights(config, weights, cfgPath, weightsPath);
  }
  opts.checkConfig?.(config);
  const model = new LoopedModel(config, { mixer: opts.mixer });
  loadStateDict(model, weights, weightsPath);
  return model;
}
