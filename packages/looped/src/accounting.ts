/*
 * Parameter and FLOP accounting (docs/model.md §7). Parameters are counted exactly from §6 (a tied
 * head once). Forward FLOPs per token, 2 per multiply-add:
 *   Mamba-2 layer  2D(2Di+2G·Ns+H) + 2K(Di+2G·Ns) + 5·Di·Ns + 2·Di·D
 *   attention      2D(Hq+2Hkv)hd + 2·Hq·hd·D + 2·T_ctx·Hq·hd,  T_ctx = (T+1)/2 in training
 *   MLP            6·D·d_ff
 *   head           2DV per loop step whose logits are computed (`logitSteps`)
 * A looped model costs R times its backbone; training ≈ 3 × forward. The head is counted for
 * `logitSteps` loop steps, 1 by default: the pre-training forward, which computes logits(R)
 * only (`steps: "last"`, `finalLoss`). A forward of every step's logits — `LoopedModel.forward`'s
 * default `steps: "all"`, the gate stages, exit evaluation — computes R: pass `logitSteps: R`. The O(Di) elementwise
 * terms are left out, as in docs/model.md §7.
 */

import { attentionProjDims } from "@loop/attention";
import { mamba2Dims } from "@loop/ssm-kernels";
import { isAttentionLayer, type ModelConfig } from "./config.js";
import { attentionConfig, mamba2Config } from "./mixer-configs.js";
import { customMixerName } from "./mixer-factory.js";
import { parameterSpecs } from "./shapes.js";

/** What `countParameters` can count: a model's own parameter list (`LoopedModel` has one). */
export interface ParameterSource {
  /** Every parameter, each once (a tied LM head is the embedding). */
  parameters(): readonly { readonly tensor: { readonly shape: readonly number[] } }[];
}

/**
 * Exact parameter count (a tied LM head counted once). Given a config: of the model it describes,
 * with the built-in mixers. Given a model: the sum of its actual parameters, so a model with
 * custom mixers (`ModelOptions.mixer`) counts what its mixers hold.
 */
export function countParameters(source: ModelConfig | ParameterSource): number {
  if (!("parameters" in source) && source.mixer !== undefined)
    throw new Error(
      `countParameters: config.mixer is "${source.mixer}", a custom mixer whose parameters the config does not describe: count the model (countParameters(model))`,
    );
  const shapes =
    "parameters" in source
      ? source.parameters().map((p) => p.tensor.shape)
      : parameterSpecs(source).map((p) => p.shape);
  let n = 0;
  for (const shape of shapes) n += shape.reduce((a, b) => a * b, 1);
  return n;
}

/**
 * What a FLOP count assumes: the sequence length for attention and how many loop steps compute
 * logits.
 */
export interface FlopOptions {
  /** Sequence length for the attention context term (T_ctx = (T+1)/2). Default 256. */
  seqLen?: number;
  /**
   * Loop steps whose logits are computed: 1 for the pre-training forward (`steps: "last"`), R
   * for a forward of every step (`steps: "all"`, the gate stages, exit evaluation). Default 1.
   */
  logitSteps?: number;
}

/** Forward and training FLOPs per token, and how many LM heads they count. */
export interface FlopBreakdown {
  /** One application of the N-layer block. */
  blockPerToken: number;
  /** R applications of the block. */
  backbonePerToken: number;
  /** The loop steps whose LM head `headPerToken` counts (`FlopOptions.logitSteps`). */
  logitSteps: number;
  /** The LM head over `logitSteps` loop steps: logitSteps · 2·D·V. */
  headPerToken: number;
  /** backbone + head: a forward computing the logits of `logitSteps` steps. */
  forwardPerToken: number;
  /** ≈ 3 × forward. */
  trainPerToken: number;
}

/** Forward FLOPs per token of one Mamba-2 layer (projections, conv1d, SSD scan, out projection). */
export function mambaLayerFlops(cfg: ModelConfig): number {
  const D = cfg.d_model;
  const { dInner: Di, nHeads: H } = mamba2Dims(mamba2Config(cfg));
  const GN = cfg.ssm.n_groups * cfg.ssm.d_state;
  const K = cfg.ssm.d_conv;
  return (
    2 * D * (2 * Di + 2 * GN + H) + 2 * K * (Di + 2 * GN) + 5 * Di * cfg.ssm.d_state + 2 * Di * D
  );
}

/**
 * Forward FLOPs per token of one attention layer at sequence length `seqLen` (projections and the
 * causal score/value products, mean context (T+1)/2).
 */
export function attentionLayerFlops(cfg: ModelConfig, seqLen: number): number {
  const D = cfg.d_model;
  const { headDim: hd } = attentionProjDims(attentionConfig(cfg));
  const Hq = cfg.attention.n_heads;
  const Hkv = cfg.attention.n_kv_heads;
  const tctx = (seqLen + 1) / 2;
  return 2 * D * (Hq + 2 * Hkv) * hd + 2 * Hq * hd * D + 2 * tctx * Hq * hd;
}

/**
 * What `flopsPerToken` can count besides a config: a model, whose layers say which mixers are
 * custom (`LoopedModel` is one).
 */
export interface FlopSource {
  readonly config: ModelConfig;
  readonly layers: readonly {
    readonly customMixer: boolean;
    readonly mixer: object & { flopsPerToken?(seqLen: number): number };
  }[];
}

/**
 * Forward FLOPs per token (docs/model.md §7), split by part. Given a config: of the model it
 * describes, with the built-in mixers. Given a model: its custom mixers (`ModelOptions.mixer`)
 * counted by their own `flopsPerToken(seqLen)` (`SequenceMixer`), and an error naming a custom
 * mixer that has none.
 */
export function flopsPerToken(
  source: ModelConfig | FlopSource,
  opts: FlopOptions = {},
): FlopBreakdown {
  const model = "layers" in source && "config" in source ? source : null;
  const cfg = model ? model.config : (source as ModelConfig);
  if (!model && cfg.mixer !== undefined)
    throw new Error(
      `flopsPerToken: config.mixer is "${cfg.mixer}", a custom mixer the config does not describe: pass the model (flopsPerToken(model))`,
    );
  const seqLen = opts.seqLen ?? 256;
  const logitSteps = opts.logitSteps ?? 1;
  let block = 0;
  for (let i = 0; i < cfg.n_layers; i++) {
    const layer = model?.layers[i];
    if (layer?.customMixer) {
      const count = layer.mixer.flopsPerToken?.(seqLen);
      if (count === undefined)
        throw new Error(
          `flopsPerToken: layer ${i}'s mixer is a custom mixer (${customMixerName(layer.mixer)}) that does not say its FLOPs: give it flopsPerToken(seqLen) (SequenceMixer)`,
        );
      block += count;
    } else
      block += isAttentionLayer(cfg, i) ? attentionLayerFlops(cfg, seqLen) : mambaLayerFlops(cfg);
    if (cfg.mlp) block += 6 * cfg.d_model * cfg.mlp.d_ff;
  }
  const backbone = cfg.n_loops * block;
  const head = logitSteps * 2 * cfg.d_model * cfg.vocab_size;
  const forward = backbone + head;
  return {
    blockPerToken: block,
    backbonePerToken: backbone,
    logitSteps,
    headPerToken: head,
    forwardPerToken: forward,
    trainPerToken: 3 * forward,
  };
}
