/**
 * Hugging Face Mamba-2 folders for tests, written as transformers writes them: config.json is
 * `json.dumps(config, indent=2, sort_keys=True) + "\n"` (PretrainedConfig.to_json_string), so
 * floats read `0.0`, `1e-05` and the default time_step_limit's upper end is a bare `Infinity`;
 * model.safetensors holds the state dict under the same names, without lm_head.weight when the
 * head is tied (transformers drops tied weights on save).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeSafetensorsFile } from "@loop/tensor/node";
import { parseConfig } from "../config.js";
import { LoopedModel } from "../model.js";
import { stateDict } from "../state-dict.js";

/**
 * The config.json transformers 4.46 writes for Mamba2Config(hidden_size=16, num_hidden_layers=2,
 * vocab_size=9, state_size=4, head_dim=8, num_heads=4, n_groups=2, chunk_size=4,
 * tie_word_embeddings=True, norm_before_gate=False), byte for byte (made with Python's json).
 */
export const HF_CONFIG_TEXT = `{
  "architectures": [
    "Mamba2ForCausalLM"
  ],
  "bos_token_id": 0,
  "chunk_size": 4,
  "conv_kernel": 4,
  "eos_token_id": 2,
  "expand": 2,
  "head_dim": 8,
  "hidden_act": "silu",
  "hidden_size": 16,
  "initializer_range": 0.1,
  "layer_norm_epsilon": 1e-05,
  "model_type": "mamba2",
  "n_groups": 2,
  "norm_before_gate": false,
  "num_heads": 4,
  "num_hidden_layers": 2,
  "pad_token_id": 1,
  "rescale_prenorm_residual": false,
  "residual_in_fp32": true,
  "rms_norm": true,
  "state_size": 4,
  "tie_word_embeddings": true,
  "time_step_floor": 0.0001,
  "time_step_limit": [
    0.0,
    Infinity
  ],
  "time_step_max": 0.1,
  "time_step_min": 0.001,
  "time_step_rank": 1,
  "torch_dtype": "float32",
  "transformers_version": "4.46.0",
  "use_bias": false,
  "use_cache": true,
  "use_conv_bias": true,
  "vocab_size": 9
}
`;

/** The looplm config HF_CONFIG_TEXT means (n_groups 2, the norm per group). */
export const HF_EQUIVALENT = parseConfig({
  backbone: "mamba",
  vocab_size: 9,
  d_model: 16,
  n_layers: 2,
  n_loops: 1,
  norm_eps: 1e-5,
  tie_embeddings: true,
  ssm: { d_state: 4, headdim: 8, expand: 2, n_groups: 2, d_conv: 4, chunk_size: 4 },
});

/** A fresh temporary folder. */
export const tmpFolder = (): string => mkdtempSync(join(tmpdir(), "hf-"));

/**
 * Write `model`'s weights and `configText` as a Hugging Face folder; returns the folder. A tied
 * head is left out of the weights, as transformers saves it.
 */
export function writeHfFolder(model: LoopedModel, configText: string): string {
  const dir = tmpFolder();
  const sd = stateDict(model);
  if (model.config.tie_embeddings) sd.delete("lm_head.weight");
  writeSafetensorsFile(join(dir, "model.safetensors"), sd, { format: "pt" });
  writeFileSync(join(dir, "config.json"), configText);
  return dir;
}

/** A model of HF_EQUIVALENT (with `ssm` settings on top) and seeded weights. */
export function hfModel(ssm: Record<string, unknown> = {}, seed = 3): LoopedModel {
  return new LoopedModel(parseConfig({ ...HF_EQUIVALENT, ssm: { ...HF_EQUIVALENT.ssm, ...ssm } }), {
    seed,
  });
}
