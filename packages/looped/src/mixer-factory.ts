/*
 * The extension point for a layer's sequence mixer. `ModelOptions.mixer` builds layer i's mixer
 * (any `SequenceMixer` of @loop/tensor) in place of the config's Mamba-2 or attention mixer, and
 * the CPU model then runs that one object wherever a layer mixes: the training forward
 * (`LoopedModel.forward`, hence `Trainer` and the evaluators), decoding, prefill, and early-exit
 * decoding and prefill. A custom mixer's parameters are its own (`parameters()`, named under
 * `backbone.layers.i.mixer.`), so `stateDict`/`loadStateDict` carry them. A device backend runs
 * only the built-in mixers, by their weights' names: `toDevice` refuses a model with a custom
 * mixer and names it.
 */
import type { Rng, SequenceMixer } from "@loop/tensor";
import type { ModelConfig } from "./config.js";

/** What a mixer factory is told about the layer it builds a mixer for. */
export interface MixerContext {
  /** The model's config (d_model is the width the mixer maps u [B,T,D] → [B,T,D] in). */
  readonly config: ModelConfig;
  /** The layer's index, 0-based. */
  readonly index: number;
  /** The mixer's initialisation stream: deterministic per model seed and layer. */
  readonly rng: Rng;
  /** Layers counted by the residual initialisation (`residualInitLayers(config)`). */
  readonly nLayers: number;
}

/**
 * Builds layer `ctx.index`'s mixer, or returns null to keep the config's built-in one (Mamba-2,
 * or attention on the config's attention layers).
 */
export type MixerFactory = (ctx: MixerContext) => SequenceMixer<unknown> | null;

/** The name an error gives a custom mixer: its class's name. */
export function customMixerName(mixer: object): string {
  return mixer.constructor?.name || "an anonymous mixer";
}
