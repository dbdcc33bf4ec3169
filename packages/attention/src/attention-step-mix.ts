/*
 * The attention mixer's one-token decode step (docs/model.md §4), written once against a
 * backend's ops and its decode kernel (`DecodeOps.attendStep` of @loop/tensor) with the weights by
 * their §6 names — the decoders run it on every backend, the KV cache on the backend's memory:
 *   q, k, v = u·q_projᵀ, u·k_projᵀ, u·v_projᵀ;  y = attendStep(cache, q, k, v, position);  out = y·o_projᵀ
 * u [B, D] → [B, D]. With `absorb` (a token that exited before this step) only k and v are made
 * and written at the position, so later tokens keep one key per position.
 */
import type { DecodeOps, DecodeRows, KvCacheState, TensorOps } from "@loop/tensor";
import { type AttentionConfig, attentionProjDims } from "./attention-mixer.js";

/** The ops an attention decode step uses. */
export type AttentionStepMixOps<T, I> = Pick<TensorOps<T, I>, "linear" | "reshape"> &
  Pick<DecodeOps<T, I>, "attendStep">;

/** u [B, D] → [B, D] through one decode step of the mixer at `position` (null with `absorb`). */
export function attentionStepMix<T, I>(
  ops: AttentionStepMixOps<T, I>,
  cfg: AttentionConfig,
  w: (name: string) => T,
  u: T,
  cache: KvCacheState<T>,
  position: number,
  rows: number,
  opts: DecodeRows<I> & { absorb?: boolean } = {},
): T | null {
  const wq = w("q_proj.weight");
  const wk = w("k_proj.weight");
  const wv = w("v_proj.weight");
  const { headDim: hd } = attentionProjDims(cfg);
  const heads = (x: T, H: number) => ops.reshape(x, [rows, H, hd]);
  const k = heads(ops.linear(u, wk), cfg.nKvHeads);
  const v = heads(ops.linear(u, wv), cfg.nKvHeads);
  const q = opts.absorb ? null : heads(ops.linear(u, wq), cfg.nHeads);
  const y = ops.attendStep(cache, q, k, v, position, { rows: opts.rows, theta: cfg.ropeTheta });
  if (!y) return null;
  return ops.linear(ops.reshape(y, [rows, cfg.nHeads * hd]), w("o_proj.weight"));
}
