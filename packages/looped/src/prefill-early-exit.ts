/*
 * Early-exit prefill: T tokens per sequence at once under the rules of `decodeStepEarlyExit`
 * (decode-early-exit.ts), run loop step by loop step over the whole sequence like `prefill`.
 * Step-major order is possible because token t's exit decision at step r depends only on its own
 * h(r), which step r's layers compute from the tokens ≤ t — never on a later step. At step r:
 *   - tokens still running enter each layer from the previous layer's output, as in `prefill`;
 *   - tokens that exited at z < r enter from h(z): attention layers give them their KV entry
 *     (extend over the mixed sequence; their outputs are dropped), Mamba-2 layers with skipped
 *     "propagate" take h(z) into their state (prefill over the mixed sequence), and with "carry"
 *     they are left out altogether: the running tokens of each row go through the scan alone, so
 *     conv window and SSM state see exactly the tokens that token-by-token decoding feeds them;
 *   - after the step the exit rule (the gate's threshold by default, or the depth cap) decides,
 *     per token, who exits.
 * Results equal T `decodeStepEarlyExit` calls up to float32 rounding (chunked scan vs
 * recurrence); an exit whose CDF lies within that rounding of q may fall on the other step.
 */
import { embedding, noGrad, type Tensor, tensor } from "@loop/tensor";
import type { DecodeState } from "./decode.js";
import {
  type EarlyExitCounts,
  type EarlyExitOptions,
  earlyExitCounts,
  earlyExitSettings,
  gatherRowData,
  stepSignals,
} from "./decode-early-exit.js";
import type { Layer, LayerState } from "./layer.js";
import { runLoop } from "./loop.js";
import type { LoopedModel } from "./model.js";
import { checkPromptIds } from "./prefill.js";

/**
 * What `prefillEarlyExit` returns: the last token's logits at its exit step, every token's exit
 * step and the work done.
 */
export interface EarlyExitPrefillResult extends EarlyExitCounts {
  /** logits(z) of each sequence's last token [B, V]. */
  logits: Tensor;
  /** Exit step of every token [B·T] (row b's tokens at b·T …), 1-based. */
  exitSteps: Int32Array;
}

/** Each position: running (exit step 0) → row of h, else the exited h(z) row. */
function mixRows(h: Tensor, hExit: Float32Array, exitSteps: Int32Array, D: number): Tensor {
  const out = new Float32Array(h.data);
  exitSteps.forEach((z, p) => {
    if (z !== 0) out.set(hExit.subarray(p * D, (p + 1) * D), p * D);
  });
  return tensor(out, h.shape);
}

/**
 * A layer with a recurrent state (Mamba-2) that exited tokens skip without a trace ("carry"): each row's running tokens
 * alone, in order, through the layer from that row's state. h [B,T,D] → [B,T,D] (exited
 * positions keep their input).
 */
function prefillRunning(
  layer: Layer,
  ls: LayerState,
  h: Tensor,
  exitSteps: Int32Array,
  B: number,
  T: number,
  D: number,
): Tensor {
  const out = new Float32Array(h.data);
  for (let b = 0; b < B; b++) {
    const pos: number[] = [];
    for (let t = 0; t < T; t++) if (exitSteps[b * T + t] === 0) pos.push(b * T + t);
    if (!pos.length) continue;
    const x = gatherRowData(h.data, D, pos);
    const y = layer.mixer.withRows(ls, [b], (sub) =>
      layer.prefill(sub, tensor(x, [1, pos.length, D])),
    );
    pos.forEach((p, j) => {
      out.set(y.data.subarray(j * D, (j + 1) * D), p * D);
    });
  }
  return tensor(out, h.shape);
}

/** Feed T tokens per sequence (`ids[b]`, as for `prefill`) with early exit. */
export function prefillEarlyExit(
  model: LoopedModel,
  st: DecodeState,
  ids: readonly ArrayLike<number>[],
  opts: EarlyExitOptions,
): EarlyExitPrefillResult {
  const op = "prefillEarlyExit";
  const B = st.batch;
  const { T, tokens } = checkPromptIds(model, st, ids, op);
  const settings = earlyExitSettings(model, opts, B * T, op);
  const { rule, maxStep, skipped, skippedWork } = settings;
  const { n_loops: R, d_model: D } = model.config;
  const N = model.layers.length;
  return noGrad(() => {
    const hExit = new Float32Array(B * T * D); // h(z) of each exited token
    const lastReadout = new Float32Array(B * D); // readout(z) of each row's last token
    const exitSteps = new Int32Array(B * T);
    let running = B * T;
    runLoop(model, embedding(tokens, model.embeddings), {
      begin: () => running > 0 || skippedWork,
      reads: () => running > 0,
      layer: (layer, h, i, r) => {
        const ls = st.states[r]![i]!;
        if (running === B * T) return layer.prefill(ls, h);
        if (!layer.mixer.positional && skipped === "carry")
          return prefillRunning(layer, ls, h, exitSteps, B, T, D);
        return layer.prefill(ls, mixRows(h, hExit, exitSteps, D));
      },
      after: (h, r) => {
        const roT = model.readout(h);
        const ro = roT.data;
        const signals = stepSignals(model, rule, roT);
        for (let p = 0; p < B * T; p++) {
          if (exitSteps[p] !== 0) continue;
          const exit = r === maxStep - 1 || rule?.step(p, r, signals(p)) === true;
          if (!exit) continue;
          exitSteps[p] = r + 1;
          running--;
          hExit.set(h.data.subarray(p * D, (p + 1) * D), p * D);
          if (p % T === T - 1)
            lastReadout.set(ro.subarray(p * D, (p + 1) * D), ((p + 1) / T - 1) * D);
        }
        return h;
      },
    });
    st.position += T;
    return {
      logits: model.head(tensor(lastReadout, [B, D])),
      exitSteps,
      ...earlyExitCounts(exitSteps, R, N, settings),
    };
  });
}
