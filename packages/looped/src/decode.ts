/**
 * Recurrent decoding. A looped model keeps one state per (loop step, layer): conv/SSM state for
 * Mamba layers, a KV cache for attention layers — R·N states. Each new token runs through all R
 * steps; step r's layers advance their own states (positions restart at 0 every loop step).
 */
import { embedding, intTensor, noGrad, Rng, type Tensor } from "@loop/tensor";
import type { LayerState } from "./layer.js";
import type { LoopedModel } from "./model.js";

export interface DecodeState {
  batch: number;
  capacity: number;
  /** Tokens consumed so far. */
  position: number;
  /** states[r][i]: loop step r (0-based), layer i. */
  states: LayerState[][];
}

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

export interface DecodeStepResult {
  /** readout(r) [B,D] for r = 1..R. */
  readouts: Tensor[];
  /** logits(r) [B,V] for r = 1..R (only step R unless allSteps). */
  logits: Tensor[];
}

/** Feed one token per sequence (ids length B); returns per-step readouts and logits. */
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
  return noGrad(() => {
    let h = embedding(intTensor(ids, [st.batch]), model.embeddings);
    const out: DecodeStepResult = { readouts: [], logits: [] };
    const R = model.config.n_loops;
    for (let r = 0; r < R; r++) {
      const layerStates = st.states[r]!;
      model.layers.forEach((l, i) => {
        h = l.step(layerStates[i]!, h);
      });
      h = model.endOfStep(h);
      const ro = model.readout(h);
      out.readouts.push(ro);
      if (allSteps || r === R - 1) out.logits.push(model.head(ro));
    }
    st.position++;
    return out;
  });
}

export interface GenerateOptions {
  maxNewTokens: number;
  /** 0 = greedy. Default 1. */
  temperature?: number;
  /** Sample among the k most likely tokens (0 or undefined = all). */
  topK?: number;
  seed?: number;
  /** Stop when this token is produced. */
  stopToken?: number;
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

/** Autoregressive generation from a prompt (batch 1); returns the new token ids. */
export function generate(
  model: LoopedModel,
  prompt: readonly number[],
  opts: GenerateOptions,
): number[] {
  if (prompt.length === 0) throw new Error("generate: prompt must contain at least one token");
  if (!Number.isInteger(opts.maxNewTokens) || opts.maxNewTokens < 0) {
    throw new Error(`generate: maxNewTokens must be an integer ≥ 0, got ${opts.maxNewTokens}`);
  }
  const V = model.config.vocab_size;
  for (const t of prompt)
    if (!Number.isInteger(t) || t < 0 || t >= V)
      throw new Error(`generate: prompt token ${t} is outside [0, ${V})`);
  const temperature = opts.temperature ?? 1;
  const topK = opts.topK ?? 0;
  if (!(temperature >= 0)) throw new Error(`generate: temperature must be ≥ 0, got ${temperature}`);
  if (!Number.isInteger(topK) || topK < 0)
    throw new Error(`generate: topK must be an integer ≥ 0, got ${topK}`);
  const rng = new Rng(opts.seed ?? 0);
  const st = initDecodeState(model, 1, prompt.length + opts.maxNewTokens);
  let last: Tensor | null = null;
  for (const t of prompt) last = decodeStep(model, st, [t], false).logits[0]!;
  const out: number[] = [];
  for (let i = 0; i < opts.maxNewTokens; i++) {
    const next = sampleToken(last!.data, temperature, topK, rng);
    out.push(next);
    if (next === opts.stopToken || i === opts.maxNewTokens - 1) break;
    last = decodeStep(model, st, [next], false).logits[0]!;
  }
  return out;
}
