/*
 * Hugging Face `Mamba2ForCausalLM` config.json → looplm config (R = 1). The weight names already
 * match docs/model.md §6, so only the config needs translating. Settings looplm's maths does not
 * implement are rejected by name rather than silently ignored.
 */
import { type ModelConfig, parseConfig } from "./config.js";

/** Whether `raw` is a Hugging Face Mamba-2 `config.json` (`model_type: "mamba2"`). */
export function isHfMamba2Config(raw: unknown): boolean {
  return (
    raw !== null &&
    typeof raw === "object" &&
    (raw as Record<string, unknown>).model_type === "mamba2"
  );
}

/** The 1-loop Mamba model config equivalent to a Hugging Face `Mamba2ForCausalLM` config. */
export function fromHfMamba2Config(
  raw: Record<string, unknown>,
  opts: { vocabSize?: number; tied?: boolean } = {},
): ModelConfig {
  const need = (k: string): unknown => {
    if (raw[k] === undefined) throw new Error(`Hugging Face mamba2 config: missing "${k}"`);
    return raw[k];
  };
  const expect = (k: string, want: unknown) => {
    if (raw[k] !== undefined && raw[k] !== want) {
      throw new Error(
        `Hugging Face mamba2 config: "${k}" = ${JSON.stringify(raw[k])} is not supported (looplm implements ${JSON.stringify(want)})`,
      );
    }
  };
  expect("use_bias", false);
  expect("use_conv_bias", true);
  expect("rms_norm", true);
  expect("norm_before_gate", false);
  const hidden = need("hidden_size") as number;
  const expand = (raw.expand as number | undefined) ?? 2;
  const headdim = (raw.head_dim as number | undefined) ?? 64;
  if (raw.num_heads !== undefined && raw.num_heads !== (expand * hidden) / headdim) {
    throw new Error(
      `Hugging Face mamba2 config: num_heads ${raw.num_heads} ≠ expand·hidden_size/head_dim = ${(expand * hidden) / headdim}`,
    );
  }
  return parseConfig({
    backbone: "mamba",
    vocab_size: opts.vocabSize ?? need("vocab_size"),
    d_model: hidden,
    n_layers: need("num_hidden_layers"),
    n_loops: 1,
    loop_norm: false,
    norm_eps: (raw.layer_norm_epsilon as number | undefined) ?? 1e-5,
    tie_embeddings: opts.tied ?? (raw.tie_word_embeddings as boolean | undefined) ?? false,
    ssm: {
      d_state: (raw.state_size as number | undefined) ?? 128,
      headdim,
      expand,
      n_groups: (raw.n_groups as number | undefined) ?? 1,
      d_conv: (raw.conv_kernel as number | undefined) ?? 4,
      chunk_size: (raw.chunk_size as number | undefined) ?? 256,
    },
    exit_gate: false,
  });
}
