/**
 * The loop over R (docs/model.md §1), written once for the training forward, decoding, prefill
 * and early-exit decoding and prefill: R loop steps of the shared N layers, each step ending
 * with `endOfStep` (norm_f when loop_norm). What differs between them is what a layer does
 * (forward, one-token step, prefill, each with its (loop step, layer) state) and what happens to
 * each step's output (readouts, logits, exit decisions): the hooks.
 */
import type { Tensor } from "@loop/tensor";
import type { Layer } from "./layer.js";
import type { LoopedModel } from "./model.js";

export interface LoopHooks {
  /** Layer i of loop step r (0-based) on h. */
  layer(l: Layer, h: Tensor, i: number, r: number): Tensor;
  /**
   * h(r) after step r's end-of-step → the h step r + 1 starts from (h(r) itself, or fewer rows
   * of it). Not called for a step whose output nobody reads (`reads`).
   */
  after(h: Tensor, r: number): Tensor;
  /** Before step r: false ends the loop (early exit: nothing left to run or to absorb). */
  begin?(r: number): boolean;
  /** Whether step r's output is read (false: its layers run only for their states). */
  reads?(r: number): boolean;
  /** Run a whole step (layers and end-of-step) through this, e.g. activation checkpointing. */
  wrapStep?(step: (h: Tensor) => Tensor, h: Tensor): Tensor;
}

/** h(0) = `h` through the model's R loop steps, driven by `hooks`. */
export function runLoop(model: LoopedModel, h: Tensor, hooks: LoopHooks): void {
  for (let r = 0; r < model.config.n_loops; r++) {
    if (hooks.begin && !hooks.begin(r)) break;
    const reads = hooks.reads ? hooks.reads(r) : true;
    const step = (x: Tensor): Tensor => {
      for (let i = 0; i < model.layers.length; i++) x = hooks.layer(model.layers[i]!, x, i, r);
      return reads ? model.endOfStep(x) : x;
    };
    const out = hooks.wrapStep ? hooks.wrapStep(step, h) : step(h);
    h = reads ? hooks.after(out, r) : out;
  }
}
