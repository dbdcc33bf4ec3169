/*
 * The options of the fused ops of `ModelOps` (model-ops.ts), generic in the backend's float
 * tensor `T` and int tensor `I`, and the exit-gate objectives' defaults (docs/exit-gate.md). Every
 * backend reads the same options and defaults, so a default lives here once.
 */
import type { RopeOptions } from "./rope-tables.js";

/** Stage-1 entropy weight β (Ouro's setting for 4 steps). */
export const DEFAULT_BETA = 0.05;
/** Stage-2 label sharpness k. */
export const DEFAULT_K = 50;
/** Stage-2 improvement threshold γ. */
export const DEFAULT_GAMMA = 0.005;

/** The chunked SSD scan's options (docs/model.md §3). */
export interface SsdOptions<T, I> {
  /** Chunk length (default 64). */
  chunkSize?: number;
  /** Initial state [B,H,P,N] (zeros when absent); gradients flow into it. */
  initialState?: T | null;
  /** The D skip [H], fused into the scan: y = SSD(…) + D_h·x. */
  D?: T | null;
  /** Packed documents: [B·T] document index per position; the state resets where it changes. */
  seqIdx?: I | null;
}

/** y [B,T,H,P] and the final state [B,H,P,N] of a scan. */
export interface SsdResult<T> {
  y: T;
  state: T;
}

/** The q, k, v projections, RoPE and causal GQA attention as one op (docs/model.md §4). */
export interface ProjectedAttentionOptions<I> {
  nHeads: number;
  nKvHeads: number;
  /** RoPE of q and k (theta default 10000, positions from offset, default 0). */
  rope?: RopeOptions;
  /** Packed documents: [B·T] document index per position (a query sees its own document only). */
  seqIdx?: I | null;
}

/** Options of the stage-1 loss op: the entropy weight β. */
export interface Stage1Options {
  /** Entropy weight β (default DEFAULT_BETA). */
  beta?: number;
}

/** Options of the stage-2 loss op: label sharpness k and improvement threshold γ. */
export interface Stage2Options {
  /** Label sharpness k (default DEFAULT_K). */
  k?: number;
  /** Improvement threshold γ (default DEFAULT_GAMMA). */
  gamma?: number;
}

/** Anything that maps readouts R × [...S, D] to gate logits [R, ...S] (an exit gate). */
export interface GateLike<T> {
  logits(readouts: readonly T[]): T;
}
