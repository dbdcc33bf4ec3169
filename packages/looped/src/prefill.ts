/*
 * Chunked prefill: the next T tokens of every sequence through the model at once, the way the
 * full forward runs them — loop step r applies every layer to the whole [B,T,D] sequence (Mamba-2
 * through the chunked SSD scan, attention causally over cache + new keys) — starting from, and
 * advancing, the decode state's one state per (loop step, layer). Afterwards every state is
 * where T `decodeStep` calls would have left it, up to float32 rounding (the chunked scan sums
 * in another order than the recurrence), and the result is the last position's readouts and
 * logits, so generation continues from it exactly as after `decodeStep`.
 */
import { embedding, IntTensor, noGrad, type Tensor, tensor } from "@loop/tensor";
import type { DecodeState, DecodeStepResult } from "./decode.js";
import { runLoop } from "./loop.js";
import type { LoopedModel } from "./model.js";

/** h [B,T,D] → its last position [B,D]. */
function lastPosition(h: Tensor, B: number, T: number, D: number): Tensor {
  const out = new Float32Array(B * D);
  for (let b = 0; b < B; b++) out.set(h.data.subarray((b * T + T - 1) * D, (b * T + T) * D), b * D);
  return tensor(out, [B, D]);
}

/**
 * Check T tokens per sequence for the decode state (errors name `op`): B = the state's batch
 * rows, the same T ≥ 1 for each, ids in the vocabulary, room for T more positions. Returns T and
 * the ids as [B, T].
 */
export function checkPromptIds(
  model: LoopedModel,
  st: DecodeState,
  ids: readonly ArrayLike<number>[],
  op: string,
): { T: number; tokens: IntTensor } {
  if (ids.length !== st.batch)
    throw new Error(`${op}: expected ${st.batch} sequences of token ids, got ${ids.length}`);
  const T = ids[0]!.length;
  if (T === 0) throw new Error(`${op}: the prompt must contain at least one token`);
  ids.forEach((row, b) => {
    if (row.length !== T)
      throw new Error(
        `${op}: every sequence needs the same number of tokens; sequence 0 has ${T}, sequence ${b} has ${row.length}`,
      );
  });
  if (st.position + T > st.capacity)
    throw new Error(
      `${op}: ${T} token(s) at position ${st.position} exceed the decode capacity ${st.capacity}`,
    );
  const V = model.config.vocab_size;
  const flat = new Int32Array(st.batch * T);
  ids.forEach((row, b) => {
    for (let t = 0; t < T; t++) {
      const id = row[t]!;
      if (!Number.isInteger(id) || id < 0 || id >= V)
        throw new Error(`${op}: token ${id} (sequence ${b}, position ${t}) is outside [0, ${V})`);
      flat[b * T + t] = id;
    }
  });
  return { T, tokens: new IntTensor(flat, [st.batch, T]) };
}

/**
 * Feed T tokens per sequence: `ids[b]` are sequence b's next tokens (B = the state's batch, the
 * same T ≥ 1 for every row). Returns readout(r) [B,D] and logits(r) [B,V] of the last position
 * for r = 1..R (logits of step R only unless allSteps), as `decodeStep` does for one token.
 */
export function prefill(
  model: LoopedModel,
  st: DecodeState,
  ids: readonly ArrayLike<number>[],
  allSteps = true,
): DecodeStepResult {
  const { T, tokens } = checkPromptIds(model, st, ids, "prefill");
  const B = st.batch;
  const { d_model: D, n_loops: R } = model.config;
  return noGrad(() => {
    const out: DecodeStepResult = { readouts: [], logits: [] };
    runLoop(model, embedding(tokens, model.embeddings), {
      layer: (l, h, i, r) => l.prefill(st.states[r]![i]!, h),
      after: (h, r) => {
        // readout and head are per position: only the last one is needed
        const ro = model.readout(lastPosition(h, B, T, D));
        out.readouts.push(ro);
        if (allSteps || r === R - 1) out.logits.push(model.head(ro));
        return h;
      },
    });
    st.position += T;
    return out;
  });
}
