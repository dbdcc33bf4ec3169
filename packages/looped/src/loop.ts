/*
 * The loop over R (docs/model.md §1), written once for the training forward (the CPU model's and
 * a `DeviceModel`'s on any backend), decoding, prefill, and early-exit decoding and prefill: R loop steps of the shared N
 * layers, each step ending with `endOfStep` (norm_f when loop_norm). What differs between them is
 * what a layer does (forward, one-token step, prefill, each with its (loop step, layer) state)
 * and what happens to each step's output (readouts, logits, exit decisions): the hooks. `T` is
 * the tensor type (a CPU or a GPU tensor), `L` the layer type.
 */

/** What the loop needs of a model: R, the layers, and the map from one step to the next. */
export interface LoopModel<T, L> {
  readonly config: { readonly n_loops: number };
  readonly layers: readonly L[];
  /** The state handed to the next loop step: norm_f(h) when loop_norm, else h. */
  endOfStep(h: T): T;
}

/** What `runLoop` does at each layer and after each loop step (see each hook). */
export interface LoopHooks<T, L> {
  /** Layer i of loop step r (0-based) on h. */
  layer(l: L, h: T, i: number, r: number): T;
  /**
   * h(r) after step r's end-of-step → the h step r + 1 starts from (h(r) itself, or fewer rows
   * of it). Not called for a step whose output nobody reads (`reads`).
   */
  after(h: T, r: number): T;
  /** Before step r: false ends the loop (early exit: nothing left to run or to absorb). */
  begin?(r: number): boolean;
  /** Whether step r's output is read (false: its layers run only for their states). */
  reads?(r: number): boolean;
  /** Run a whole step (layers and end-of-step) through this, e.g. activation checkpointing. */
  wrapStep?(step: (h: T) => T, h: T): T;
  /** Run each layer application (layer i of a step) through this: per-layer checkpointing. */
  wrapLayer?(layer: (h: T) => T, h: T, i: number): T;
}

/** h(0) = `h` through the model's R loop steps, driven by `hooks`. */
export function runLoop<T, L>(model: LoopModel<T, L>, h: T, hooks: LoopHooks<T, L>): void {
  for (let r = 0; r < model.config.n_loops; r++) {
    if (hooks.begin && !hooks.begin(r)) break;
    const reads = hooks.reads ? hooks.reads(r) : true;
    const step = (x: T): T => {
      for (let i = 0; i < model.layers.length; i++) {
        const l = model.layers[i]!;
        x = hooks.wrapLayer
          ? hooks.wrapLayer((y) => hooks.layer(l, y, i, r), x, i)
          : hooks.layer(l, x, i, r);
      }
      return reads ? model.endOfStep(x) : x;
    };
    const out = hooks.wrapStep ? hooks.wrapStep(step, h) : step(h);
    h = reads ? hooks.after(out, r) : out;
  }
}

/** The per-step outputs of a forward: readout(r), logits(r) and r (1-based) of each kept step. */
export interface StepOutputsOf<T> {
  readouts: T[];
  logits: T[];
  stepIndex: number[];
}

/**
 * The `after` hook of a forward: keeps readout(r) and (unless `skipLogits`) logits(r) of every
 * step, or of step R only when `all` is false, in `out`.
 */
export function keepSteps<T>(
  model: { readonly config: { readonly n_loops: number }; readout(h: T): T; head(ro: T): T },
  out: StepOutputsOf<T>,
  all: boolean,
  skipLogits: boolean,
): (h: T, r: number) => T {
  const R = model.config.n_loops;
  return (h, r) => {
    if (all || r === R - 1) {
      const ro = model.readout(h);
      out.readouts.push(ro);
      if (!skipLogits) out.logits.push(model.head(ro));
      out.stepIndex.push(r + 1);
    }
    return h;
  };
}
