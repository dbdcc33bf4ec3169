/*
 * Recurrent decoding. A looped model keeps one state per (loop step, layer): conv/SSM state for
 * Mamba layers, a KV cache for attention layers — R·N states. Each new token runs through all R
 * steps; step r's layers advance their own states (positions restart at 0 every loop step).
 */
import { embedding, intTensor, noGrad, type Rng, Tensor } from "@loop/tensor";
import { withTemporaries } from "@loop/tensor/kernel";
import type { LayerState } from "./layer.js";
import { runLoop } from "./loop.js";
import type { LoopedModel } from "./model.js";

/**
 * The recurrent decoding state: one layer state per (loop step, layer) and the position reached.
 */
export interface DecodeState {
  batch: number;
  capacity: number;
  /** Tokens consumed so far. */
  position: number;
  /** states[r][i]: loop step r (0-based), layer i. */
  states: LayerState[][];
}

/** A fresh decoding state for `batch` sequences of at most `capacity` tokens. */
export function initDecodeState(model: LoopedModel, batch: number, capacity: number): DecodeState {
  if (!Number.isInteger(batch) || batch < 1)
    throw new Error(`initDecodeState: batch must be an integer ≥ 1, got ${batch}`);
  if (!Number.isInteger(capacity) || capacity < 1)
    throw new Error(`initDecodeState: capacity must be an integer ≥ 1, got ${capacity}`);
  const states: LayerState[][] = [];
  for (let r = 0; r < model.config.n_loops; r++)
    states.push(model.layers.map((l) => l.initState(batch, capacity)));
  return { batch, capacity, position: 0, states };
}

/** One decoding step's outputs: readout(r) and logits(r) of the new token. */
export interface DecodeStepResult {
  /** readout(r) [B,D] for r = 1..R. */
  readouts: Tensor[];
  /** logits(r) [B,V] for r = 1..R (only step R unless allSteps). */
  logits: Tensor[];
}

/** A copy of t outside the scratch pool (an output that outlives decodeStep's temporaries). */
function kept(t: Tensor): Tensor {
  return new Tensor(t.data.slice(), t.shape);
}

/**
 * Feed one token per sequence (ids length B); returns per-step readouts and logits. Every
 * intermediate comes from the pool of temporaries (a token allocates no fresh buffers: shared
 * ones are slow to create); the returned tensors are copies.
 */
export function decodeStep(
  model: LoopedModel,
  st: DecodeState,
  ids: ArrayLike<number>,
  allSteps = true,
): DecodeStepResult {
  if (ids.length !== st.batch)
    throw new Error(`decodeStep: expected ${st.batch} token ids, got ${ids.length}`);
  if (st.position >= st.capacity)
    throw new Error(
      `decodeStep: position ${st.position} exceeds the decode capacity ${st.capacity}`,
    );
  const out = noGrad(() =>
    withTemporaries(() => {
      const res: DecodeStepResult = { readouts: [], logits: [] };
      const R = model.config.n_loops;
      runLoop(model, embedding(intTensor(ids, [st.batch]), model.embeddings), {
        layer: (l, h, i, r) => l.step(st.states[r]![i]!, h),
        after: (h, r) => {
          const ro = model.readout(h);
          res.readouts.push(kept(ro));
          if (allSteps || r === R - 1) res.logits.push(kept(model.head(ro)));
          return h;
        },
      });
      return res;
    }),
  );
  st.position++;
  return out;
}

/** Sample a token id from one row of logits. */
export function sampleToken(
  logits: ArrayLike<number>,
  temperature: number,
  topK: number,
  rng: Rng,
): number {
  const V = logits.length;
  if (temperature <= 0) {
    let best = 0;
    for (let j = 1; j < V; j++) if (logits[j]! > logits[best]!) best = j;
    return best;
  }
  let idx = [...Array(V).keys()];
  if (topK > 0 && topK < V)
    idx = idx.sort((a, b) => logits[b]! - logits[a]! || a - b).slice(0, topK);
  let m = Number.NEGATIVE_INFINITY;
  for (const j of idx) m = Math.max(m, logits[j]! / temperature);
  const w = idx.map((j) => Math.exp(logits[j]! / temperature - m));
  const total = w.reduce((a, b) => a + b, 0);
  let u = rng.uniform() * total;
  for (let k = 0; k < idx.length; k++) {
    u -= w[k]!;
    if (u <= 0) return idx[k]!;
  }
  return idx[idx.length - 1]!;
}
