/*
 * Activation checkpointing, written once for the CPU model and a device model: which part of
 * the forward keeps only its output and is recomputed in the backward. `"step"` (or `true`): each
 * loop step — the kept activations are one [B,T,D] per loop step, and one step's activations live
 * at a time in the backward; `"layer"`: each layer application — one [B,T,D] per layer and step
 * kept, one layer's activations at a time (less memory for a deep stack, as a `24⊗1` whose one
 * loop step holds every layer; the same one extra forward).
 */
import type { LoopedForwardOptions } from "./looped-forward.js";

/** What is recomputed in the backward: nothing (false), each loop step (true, "step"), each layer. */
export type Checkpointing = boolean | "step" | "layer";

/** The checkpointing settings, for messages and checks. */
export const CHECKPOINTING_MODES = ["step", "layer"] as const;

/** `fn(x)` checkpointed, `params` the trainable tensors it reads (a backend's `checkpoint`). */
type CheckpointFn<T> = (fn: (x: T) => T, x: T, params: readonly T[]) => T;

/**
 * The forward's wrappers for `mode`: `checkpoint` over each loop step (reading `stepParams`:
 * every layer's weights, norm_f with loop_norm) or over each layer (reading `layerParams(i)`).
 */
export function checkpointWrappers<T>(
  mode: Checkpointing | undefined,
  checkpoint: CheckpointFn<T>,
  stepParams: () => readonly T[],
  layerParams: (i: number) => readonly T[],
): Pick<LoopedForwardOptions<T, unknown>, "wrapStep" | "wrapLayer"> {
  if (!mode) return {};
  if (mode === "layer") {
    const byLayer = new Map<number, readonly T[]>();
    return {
      wrapLayer: (layer, h, i) => {
        let ps = byLayer.get(i);
        if (!ps) byLayer.set(i, (ps = layerParams(i)));
        return checkpoint(layer, h, ps);
      },
    };
  }
  const ps = stepParams();
  return { wrapStep: (step, h) => checkpoint(step, h, ps) };
}
