/*
 * Hugging Face `Mamba2ForCausalLM` config.json ↔ looplm config (R = 1). The weight names already
 * match docs/model.md §6, so only the config needs translating (docs/formats.md, "Hugging Face
 * Mamba-2 folders", has the whole mapping). Every field of transformers' `Mamba2Config` is
 * either honoured or refused by name; a missing field takes transformers' default; fields
 * transformers does not define are named in one warning line.
 */
import { type ModelConfig, NORM_GROUPS, type NormGroups, parseConfig } from "./config.js";

/** transformers' Mamba2Config defaults, for the fields looplm reads (a missing field takes it). */
const HF_DEFAULTS = {
  head_dim: 64,
  state_size: 128,
  layer_norm_epsilon: 1e-5,
  expand: 2,
  conv_kernel: 4,
  n_groups: 8,
  chunk_size: 256,
  tie_word_embeddings: false,
} as const;

/** Init-only settings: they shape a fresh model's weights, not what a trained one computes. */
const INIT_ONLY = [
  "initializer_range",
  "rescale_prenorm_residual",
  "time_step_rank",
  "time_step_min",
  "time_step_max",
  "time_step_floor",
];

/** What every transformers config may hold (PretrainedConfig), none of it read by the maths. */
const GENERIC = [
  "architectures",
  "model_type",
  "torch_dtype",
  "dtype",
  "transformers_version",
  "bos_token_id",
  "eos_token_id",
  "pad_token_id",
  "use_cache",
  "_name_or_path",
  "auto_map",
  "tokenizer_class",
];

/** The fields looplm reads (sizes and semantics) besides the init-only and generic ones. */
const READ = [
  "vocab_size",
  "hidden_size",
  "num_hidden_layers",
  "num_heads",
  "head_dim",
  "state_size",
  "expand",
  "n_groups",
  "conv_kernel",
  "chunk_size",
  "layer_norm_epsilon",
  "tie_word_embeddings",
  "time_step_limit",
  "hidden_act",
  "use_bias",
  "use_conv_bias",
  "rms_norm",
  "residual_in_fp32",
  // mamba_ssm's (not Mamba2Config's), refused unless false
  "norm_before_gate",
  // looplm's own (transformers keeps an unknown field as it is): the gated norm's grouping
  "norm_groups",
];

/** Every config.json field the reader knows (anything else is named in a warning). */
export const HF_MAMBA2_FIELDS: readonly string[] = [...READ, ...INIT_ONLY, ...GENERIC];

/** The activations transformers' ACT2FN maps to silu, the only one looplm's mixer applies. */
const SILU = ["silu", "swish"];

/** Whether a parsed config.json is a Hugging Face Mamba-2 one (model_type "mamba2"). */
export function isHfMamba2Config(raw: unknown): boolean {
  return (
    raw !== null &&
    typeof raw === "object" &&
    (raw as Record<string, unknown>).model_type === "mamba2"
  );
}

/** Options of fromHfMamba2Config. */
export interface HfMamba2Options {
  /** The vocabulary size (HF pads it: the embedding's rows), instead of vocab_size. */
  vocabSize?: number;
  /** Tie the head whatever tie_word_embeddings says (a folder without lm_head.weight). */
  tied?: boolean;
  /** Receives each one-line notice (unknown fields; the norm grouping with n_groups > 1). */
  onNote?: (line: string) => void;
}

function fail(msg: string): never {
  throw new Error(`Hugging Face mamba2 config: ${msg}`);
}

/** The config.json field each looplm key read from it comes from (for messages). */
const HF_NAME: Record<string, string> = {
  "ssm.time_step_limit": "time_step_limit",
  "ssm.d_state": "state_size",
  "ssm.headdim": "head_dim",
  "ssm.expand": "expand",
  "ssm.n_groups": "n_groups",
  "ssm.d_conv": "conv_kernel",
  "ssm.chunk_size": "chunk_size",
  norm_eps: "layer_norm_epsilon",
  d_model: "hidden_size",
  n_layers: "num_hidden_layers",
  tie_embeddings: "tie_word_embeddings",
};

/** A parsed HF Mamba-2 config.json → the looplm config it means (see the header). */
export function fromHfMamba2Config(
  raw: Record<string, unknown>,
  opts: HfMamba2Options = {},
): ModelConfig {
  const need = (k: string): unknown => {
    if (raw[k] === undefined) fail(`missing "${k}"`);
    return raw[k];
  };
  const get = <K extends keyof typeof HF_DEFAULTS>(k: K): unknown => raw[k] ?? HF_DEFAULTS[k];
  const only = (k: string, want: unknown, why: string) => {
    if (raw[k] !== undefined && raw[k] !== want)
      fail(`"${k}" = ${JSON.stringify(raw[k])} is not supported (${why})`);
  };
  only("use_bias", false, "looplm's in_proj and out_proj have no bias");
  only("use_conv_bias", true, "looplm's conv1d always has a bias");
  only("rms_norm", true, "looplm's mixer always applies the gated RMSNorm");
  only("norm_before_gate", false, "looplm gates before it normalises, as transformers does");
  if (raw.hidden_act !== undefined && !SILU.includes(raw.hidden_act as string))
    fail(
      `"hidden_act" = ${JSON.stringify(raw.hidden_act)} is not supported (looplm's mixer applies silu: "silu" or "swish")`,
    );
  // (the weights decide whether the head is tied; a non-boolean here is still a broken config)
  for (const k of ["residual_in_fp32", "tie_word_embeddings"])
    if (raw[k] !== undefined && typeof raw[k] !== "boolean")
      fail(`"${k}" must be true or false, got ${JSON.stringify(raw[k])}`);
  const grouping = (raw.norm_groups ?? "per_group") as NormGroups;
  if (!NORM_GROUPS.includes(grouping))
    fail(
      `"norm_groups" must be one of ${NORM_GROUPS.map((g) => `"${g}"`).join(", ")}, got ${JSON.stringify(raw.norm_groups)}`,
    );
  const hidden = need("hidden_size") as number;
  const expand = get("expand") as number;
  const headdim = get("head_dim") as number;
  const nGroups = get("n_groups") as number;
  const unknown = Object.keys(raw).filter((k) => !HF_MAMBA2_FIELDS.includes(k));
  if (unknown.length)
    opts.onNote?.(
      `config.json: ignoring ${unknown.length === 1 ? "a field" : "fields"} transformers' Mamba2Config does not define: ${unknown.join(", ")}`,
    );
  let cfg: ModelConfig;
  try {
    cfg = parseConfig({
      backbone: "mamba",
      vocab_size: opts.vocabSize ?? need("vocab_size"),
      d_model: hidden,
      n_layers: need("num_hidden_layers"),
      n_loops: 1,
      loop_norm: false,
      norm_eps: get("layer_norm_epsilon"),
      tie_embeddings: opts.tied ?? get("tie_word_embeddings"),
      ssm: {
        d_state: get("state_size") as number,
        headdim,
        expand,
        n_groups: nGroups,
        d_conv: get("conv_kernel") as number,
        chunk_size: get("chunk_size") as number,
        ...(raw.time_step_limit === undefined
          ? {}
          : { time_step_limit: raw.time_step_limit as [number, number] }),
        norm_groups: grouping,
      },
      exit_gate: false,
    });
  } catch (e) {
    // name the HF field, not the looplm key it became
    fail(
      (e as Error).message
        .replace(/^config: /, "")
        .replace(
          /\b(ssm\.\w+|norm_eps|d_model|n_layers|tie_embeddings)\b/g,
          (k) => HF_NAME[k] ?? k,
        ),
    );
  }
  // (after the sizes are checked: a hidden_size of NaN is named as such, not as num_heads ≠ NaN)
  if (raw.num_heads !== undefined && raw.num_heads !== (expand * hidden) / headdim)
    fail(
      `num_heads ${raw.num_heads} ≠ expand·hidden_size/head_dim = ${(expand * hidden) / headdim}`,
    );
  if (nGroups > 1)
    opts.onNote?.(
      grouping === "whole"
        ? `config.json: n_groups = ${nGroups}; the gated norm takes its RMS over all ${cfg.ssm.expand * cfg.d_model} channels of d_inner ("norm_groups": "whole": transformers' PyTorch path), not per group as mamba_ssm`
        : `config.json: n_groups = ${nGroups}; the gated norm takes its RMS per group of ${(cfg.ssm.expand * cfg.d_model) / nGroups} channels (mamba_ssm, transformers' CUDA kernels); "norm_groups": "whole" in config.json gives transformers' PyTorch path`,
    );
  return cfg;
}

/**
 * A looplm config → the config.json of the Hugging Face Mamba2ForCausalLM that computes the same
 * model: every Mamba2Config field written (keys sorted, as transformers writes them), the
 * init-only ones as looplm initialises (docs/formats.md). Only a plain Mamba-2 model has such a
 * folder: a looped, normed-loop, exit-gated or attention model is refused by name.
 */
export function toHfMamba2Config(cfg: ModelConfig): Record<string, unknown> {
  const why: string[] = [];
  if (cfg.backbone !== "mamba") why.push(`backbone "${cfg.backbone}" (only "mamba")`);
  if (cfg.n_loops !== 1) why.push(`n_loops ${cfg.n_loops} (only 1)`);
  if (cfg.loop_norm) why.push("loop_norm");
  if (cfg.exit_gate) why.push("exit_gate");
  if (cfg.mixer !== undefined) why.push(`the custom mixer "${cfg.mixer}"`);
  if (why.length)
    throw new Error(
      `a Hugging Face Mamba2ForCausalLM folder holds a plain Mamba-2 model; this one has ${why.join(", ")}`,
    );
  const s = cfg.ssm;
  const dInner = s.expand * cfg.d_model;
  const out: Record<string, unknown> = {
    architectures: ["Mamba2ForCausalLM"],
    chunk_size: s.chunk_size,
    conv_kernel: s.d_conv,
    expand: s.expand,
    head_dim: s.headdim,
    hidden_act: "silu",
    hidden_size: cfg.d_model,
    initializer_range: 0.1,
    layer_norm_epsilon: cfg.norm_eps,
    model_type: "mamba2",
    n_groups: s.n_groups,
    num_heads: dInner / s.headdim,
    num_hidden_layers: cfg.n_layers,
    rescale_prenorm_residual: false,
    residual_in_fp32: true,
    rms_norm: true,
    state_size: s.d_state,
    tie_word_embeddings: cfg.tie_embeddings,
    time_step_floor: 1e-4,
    time_step_limit: s.time_step_limit ?? [0, Number.POSITIVE_INFINITY],
    time_step_max: 0.1,
    time_step_min: 0.001,
    time_step_rank: Math.ceil(cfg.d_model / 16),
    torch_dtype: "float32",
    use_bias: false,
    use_cache: true,
    use_conv_bias: true,
    vocab_size: cfg.vocab_size,
  };
  // with several groups the grouping is stated (transformers' two paths differ there)
  if (s.n_groups > 1) out.norm_groups = s.norm_groups ?? "per_group";
  return Object.fromEntries(
    Object.keys(out)
      .sort()
      .map((k) => [k, out[k]]),
  );
}
