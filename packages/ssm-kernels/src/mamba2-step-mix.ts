/*
 * The Mamba-2 mixer's one-token decode step (docs/model.md §3), written once against a backend's
 * ops and its decode kernel (`DecodeOps.mamba2Step` of @loop/tensor) with the weights by their §6
 * names — the decoders run it on every backend, the state on the backend's memory:
 *   zx = u·in_projᵀ;  y, z = mamba2Step(zx, state);  out = (gatedRmsnorm(y, z)·norm.weight)·out_projᵀ
 * u [B, D] → [B, D]. With `absorb` (early exit's skipped steps) the state update alone.
 */
import type { DecodeOps, DecodeRows, Mamba2DecodeState, Mamba2Ops, TensorOps } from "@loop/tensor";
import { type Mamba2Config, normGroupsOf } from "./mamba2-config.js";

/** The ops a Mamba-2 decode step uses. */
export type Mamba2StepMixOps<T, I> = Pick<TensorOps<T, I>, "linear"> &
  Pick<Mamba2Ops<T, I>, "gatedRmsnorm"> &
  Pick<DecodeOps<T, I>, "mamba2Step">;

/** u [B, D] → [B, D] through one decode step of the mixer (null with `absorb`). */
export function mamba2StepMix<T, I>(
  ops: Mamba2StepMixOps<T, I>,
  cfg: Mamba2Config,
  w: (name: string) => T,
  u: T,
  state: Mamba2DecodeState<T>,
  opts: DecodeRows<I> & { absorb?: boolean } = {},
): T | null {
  const zx = ops.linear(u, w("in_proj.weight"));
  const r = ops.mamba2Step(
    cfg,
    zx,
    state,
    {
      convWeight: w("conv1d.weight"),
      convBias: w("conv1d.bias"),
      dtBias: w("dt_bias"),
      aLog: w("A_log"),
      d: w("D"),
    },
    opts,
  );
  if (!r) return null;
  const g = ops.gatedRmsnorm(r.y, r.z, w("norm.weight"), normGroupsOf(cfg), cfg.normEps);
  return ops.linear(g, w("out_proj.weight"));
}
