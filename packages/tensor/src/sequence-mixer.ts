/*
 * What a layer and the decoders need from a sequence mixer (Mamba-2, attention, or a new one),
 * whatever its decoding state: the mixer owns that state — it makes it, advances it by one
 * token or by a run of tokens, takes tokens into chosen rows without output, and runs a step on
 * a subset of the rows. A layer and the loop over R (training, decode, prefill, early exit) go
 * through these methods only, so a new mixer is one class, not a case in every decoder.
 */
import type { Module } from "./module.js";
import type { Tensor } from "./tensor.js";

/**
 * The protocol every sequence mixer implements (Mamba-2, attention, yours): a training forward over
 * a whole sequence and the decoding operations on its own state `S`.
 */
export interface SequenceMixer<S> extends Module {
  /**
   * True when the state holds one entry per position (a KV cache): every token must enter it,
   * even one that exited early, for later tokens to read; false for a recurrent state, which a
   * skipped token may leave as it is ("carry").
   */
  readonly positional: boolean;
  /**
   * u [B,T,D] → [B,T,D] from an empty state, differentiable (the training forward and
   * evaluation); `seqIdx`: packed documents ([B·T] document index per position, or null).
   */
  forward(u: Tensor, seqIdx?: Int32Array | null): Tensor;
  /** An empty decoding state for `batch` rows and up to `capacity` positions. */
  initState(batch: number, capacity: number): S;
  /** One token of every row: u [B,D] → [B,D], advancing `state`. Inference only. */
  step(state: S, u: Tensor): Tensor;
  /**
   * Optional fusion of the pre-norm residual layer around `step`: h + step(rmsnorm(h)). The
   * layer calls it when present and composes those three ops itself otherwise.
   */
  stepResidual?(state: S, h: Tensor, normWeight: Tensor, eps: number): Tensor;
  /** The next T tokens of every row: u [B,T,D] → [B,T,D], advancing `state` as T steps would. */
  prefill(state: S, u: Tensor): Tensor;
  /** Take one token u [rows.length, D] into the rows `rows` (ascending) without output. */
  absorb(state: S, u: Tensor, rows: readonly number[]): void;
  /**
   * Run `fn` on the state of the rows `rows` (ascending) alone, as a state of rows.length rows,
   * and keep in `state` what `fn` changed (for a positional state: the entry of the current
   * position, which `fn` advances once).
   */
  withRows<R>(state: S, rows: readonly number[], fn: (sub: S) => R): R;
  /**
   * The current position is complete in every row (some by a `withRows` step, others absorbed):
   * move a positional state on to the next position. A recurrent state has nothing to do.
   */
  endPosition(state: S): void;
  /**
   * Optional: forward FLOPs per token at sequence length `seqLen` (2 per multiply-add), what
   * `flopsPerToken(model)` of @loop/looped counts for a custom mixer; the built-in mixers are
   * counted from the config (docs/model.md §7) and need not say.
   */
  flopsPerToken?(seqLen: number): number;
}
