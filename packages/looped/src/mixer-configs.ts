/*
 * The mixers' own configs for a model config (model.md §3–§4): the one translation from the
 * formats.md `config.json` keys to `@loop/ssm-kernels` and `@loop/attention`, so sizes derived
 * from a config (parameter shapes, FLOPs) come from the mixers' own formulas.
 */
import type { AttentionConfig } from "@loop/attention";
import type { Mamba2Config } from "@loop/ssm-kernels";
import type { ModelConfig } from "./config.js";

/** The Mamba-2 mixer config (`@loop/ssm-kernels`) of a model config's `ssm` settings. */
export function mamba2Config(cfg: ModelConfig): Mamba2Config {
  const s = cfg.ssm;
  return {
    dModel: cfg.d_model,
    dState: s.d_state,
    headdim: s.headdim,
    expand: s.expand,
    nGroups: s.n_groups,
    dConv: s.d_conv,
    chunkSize: s.chunk_size,
    normEps: cfg.norm_eps,
    ...(s.time_step_limit ? { dtLimit: s.time_step_limit } : {}),
    ...(s.norm_groups === "whole" ? { normGroups: 1 } : {}),
  };
}

/** The attention mixer config (`@loop/attention`) of a model config's `attention` settings. */
export function attentionConfig(cfg: ModelConfig): AttentionConfig {
  return {
    dModel: cfg.d_model,
    nHeads: cfg.attention.n_heads,
    nKvHeads: cfg.attention.n_kv_heads,
    ropeTheta: cfg.attention.rope_theta,
  };
}
