/*
 * The looped model's differentiable forward (docs/model.md §1–§2), written once against the
 * backend ops (`ModelOps` of @loop/tensor) and the weights by their §6 names. `LoopedModel` runs
 * it on the CPU ops, `DeviceModel` on any backend's:
 *   h(0) = embed(tokens); h(r) = the N layers applied to h(r−1) (then norm_f when loop_norm);
 *   readout(r) = norm_f(h(r)) (h(r) itself with loop_norm); logits(r) = readout(r)·Wᵀ, W the LM
 *   head or, tied, the embedding; a layer is x ← x + mixer(rmsnorm(x)), then with an MLP
 *   x ← x + mlp(rmsnorm(x)).
 * Every weight is one leaf used by all R steps, so the tape sums its R gradient contributions.
 */
import { attentionMix, swigluMix } from "@loop/attention";
import { exitGateLogits } from "@loop/exit-gate";
import { mamba2Mix } from "@loop/ssm-kernels";
import { type ModelOps, shapeStr } from "@loop/tensor";
import { isAttentionLayer, type ModelConfig } from "./config.js";
import { keepSteps, type LoopModel, runLoop, type StepOutputsOf } from "./loop.js";
import { attentionConfig, mamba2Config } from "./mixer-configs.js";

/** The weight named `name` (docs/model.md §6, e.g. "backbone.layers.0.mixer.in_proj.weight"). */
export type WeightLookup<T> = (name: string) => T;

/**
 * Options of the looped forward: which steps' outputs, whether to compute logits, packed documents,
 * and a wrapper around each loop step.
 */
export interface LoopedForwardOptions<T, I> {
  /** "all": readout and logits of every loop step; "last": of step R only (pre-training). */
  steps?: "all" | "last";
  /** Skip the LM head (readouts only). */
  skipLogits?: boolean;
  /** Packed documents: [B·T] document index per position (every layer resets at a start). */
  seqIdx?: I | null;
  /** Run each whole loop step through this (activation checkpointing per loop step). */
  wrapStep?: (step: (h: T) => T, h: T) => T;
  /** Run each layer application through this (activation checkpointing per layer). */
  wrapLayer?: (layer: (h: T) => T, h: T, i: number) => T;
}

/**
 * How the layers mix: layer `index`'s mixer on u [B,T,D] → [B,T,D] (packed documents `seqIdx`).
 * The CPU model calls each layer's own mixer object (mixer-factory.ts); a device model the
 * built-in mixers (`builtinMix`).
 */
export type LayerMix<T, I> = (index: number, u: T, seqIdx: I | null) => T;

/** The config's built-in mixers on `ops` (Mamba-2, attention on attention layers), weights by name. */
export function builtinMix<T, I>(
  ops: ModelOps<T, I>,
  cfg: ModelConfig,
  w: WeightLookup<T>,
): LayerMix<T, I> {
  return (index, u, seqIdx) => {
    const at = (name: string) => w(`backbone.layers.${index}.mixer.${name}`);
    return isAttentionLayer(cfg, index)
      ? attentionMix(ops, attentionConfig(cfg), at, u, { seqIdx })
      : mamba2Mix(ops, mamba2Config(cfg), at, u, { seqIdx }).y;
  };
}

/** A layer on h [B,T,D] → h [B,T,D]; `w` its weights (names relative to it), `mix` its mixer. */
export function layerForward<T, I>(
  ops: ModelOps<T, I>,
  cfg: ModelConfig,
  w: WeightLookup<T>,
  h: T,
  mix: (u: T) => T,
): T {
  const at = (prefix: string) => (name: string) => w(`${prefix}${name}`);
  const u = ops.rmsnorm(h, w("norm.weight"), cfg.norm_eps);
  const y = mix(u);
  // the norms' outputs are read by projections only (a backend may keep those in f16)
  ops.done?.(u);
  const x = ops.binary("add", h, y);
  if (!cfg.mlp) return x;
  const v = ops.rmsnorm(x, w("mlp_norm.weight"), cfg.norm_eps);
  const m = swigluMix(ops, at("mlp."), v);
  ops.done?.(v);
  return ops.binary("add", x, m);
}

/** The model's maps around the loop (embedding, end of step, readout, head, gate) on `ops`. */
export interface LoopedCore<T, I> extends LoopModel<T, number> {
  readonly config: ModelConfig;
  /** Layer i's mixer (the built-in ones, or the CPU model's own mixer objects). */
  readonly mix: LayerMix<T, I>;
  embed(tokens: I): T;
  endOfStep(h: T): T;
  readout(h: T): T;
  head(readout: T): T;
  /** Gate logits a [R, B, T] from readouts R × [B, T, D] (the model must have an exit gate). */
  gateLogits(readouts: readonly T[]): T;
}

/** The maps around the loop on `ops`; `mix` the layers' mixers (default: the built-in ones). */
export function loopedCore<T, I>(
  ops: ModelOps<T, I>,
  config: ModelConfig,
  w: WeightLookup<T>,
  mix: LayerMix<T, I> = builtinMix(ops, config, w),
): LoopedCore<T, I> {
  const eps = config.norm_eps;
  const normF = () => w("backbone.norm_f.weight");
  return {
    config,
    mix,
    layers: Array.from({ length: config.n_layers }, (_v, i) => i),
    embed(tokens) {
      const shape = ops.shapeOf(tokens);
      if (shape.length !== 2)
        throw new Error(`forward: tokens must be [B, T], got ${shapeStr(shape)}`);
      if (shape[0] === 0 || shape[1] === 0)
        throw new Error(`forward: tokens must be non-empty, got ${shapeStr(shape)}`);
      return ops.embedding(tokens, w("backbone.embeddings.weight"));
    },
    endOfStep: (h) => (config.loop_norm ? ops.rmsnorm(h, normF(), eps) : h),
    readout: (h) => (config.loop_norm ? h : ops.rmsnorm(h, normF(), eps)),
    head: (ro) =>
      ops.linear(ro, w(config.tie_embeddings ? "backbone.embeddings.weight" : "lm_head.weight")),
    gateLogits(readouts) {
      if (!config.exit_gate)
        throw new Error("gateLogits: the model has no exit gate (config exit_gate is false)");
      return exitGateLogits(ops, (n) => w(`exit_gate.${n}`), readouts);
    },
  };
}

/** tokens [B,T] → readout(r) and (unless skipLogits) logits(r) of the kept loop steps. */
export function loopedForward<T, I>(
  ops: ModelOps<T, I>,
  core: LoopedCore<T, I>,
  w: WeightLookup<T>,
  tokens: I,
  opts: LoopedForwardOptions<T, I> = {},
): StepOutputsOf<T> {
  const seqIdx = opts.seqIdx ?? null;
  const out: StepOutputsOf<T> = { readouts: [], logits: [], stepIndex: [] };
  const layerWeights = core.layers.map((i) => (name: string) => w(`backbone.layers.${i}.${name}`));
  runLoop(core, core.embed(tokens), {
    layer: (i, h) =>
      layerForward(ops, core.config, layerWeights[i]!, h, (u) => core.mix(i, u, seqIdx)),
    wrapStep: opts.wrapStep,
    wrapLayer: opts.wrapLayer,
    after: keepSteps(core, out, (opts.steps ?? "all") === "all", opts.skipLogits ?? false),
  });
  return out;
}
