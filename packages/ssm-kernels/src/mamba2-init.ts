/*
 * Mamba-2 initialisation for training from scratch (docs/model.md §3):
 *   dt0 = exp(U[ln 1e-3, ln 1e-1]) clamped at ≥ 1e-4, dt_bias = dt0 + ln(−expm1(−dt0))
 *   (inverse softplus); A_log = ln U[1, 16]; D = 1; norm weight 1; conv bias 0; in_proj,
 *   conv1d.weight, out_proj uniform ±1/sqrt(fan_in) (conv fan_in = K, depthwise); out_proj
 *   additionally divided by sqrt(nLayers). Each tensor draws from its own named child stream.
 */
import type { Rng } from "@loop/tensor";
import { allocPersistentF32 } from "@loop/tensor/kernel";
import type { Mamba2Config, Mamba2Dims, Mamba2Weights } from "./mamba2-config.js";

// Parameter storage is long-lived, so never from `allocF32`'s per-step scratch pool (a mixer
// built inside `withScratch` would otherwise lose its weights when the step ends).
function uniform(rng: Rng, n: number, bound: number): Float32Array {
  return rng.fillUniform(allocPersistentF32(n), -bound, bound);
}

/**
 * Fresh Mamba-2 weights for `cfg` as mamba_ssm initialises them (docs/model.md §3), out_proj scaled
 * by 1/sqrt(nLayers).
 */
export function initMamba2(
  cfg: Mamba2Config,
  dims: Mamba2Dims,
  rng: Rng,
  nLayers: number,
): Mamba2Weights {
  const { dInner, nHeads, convDim, inProjDim } = dims;
  const D = cfg.dModel;
  const K = cfg.dConv;
  const dtRng = rng.child("dt_bias");
  const dtBias = allocPersistentF32(nHeads);
  for (let h = 0; h < nHeads; h++) {
    const dt0 = Math.max(Math.exp(dtRng.uniformIn(Math.log(1e-3), Math.log(1e-1))), 1e-4);
    dtBias[h] = dt0 + Math.log(-Math.expm1(-dt0));
  }
  const aRng = rng.child("A_log");
  const aLog = allocPersistentF32(nHeads);
  for (let h = 0; h < nHeads; h++) aLog[h] = Math.log(aRng.uniformIn(1, 16));
  return {
    inProj: uniform(rng.child("in_proj"), inProjDim * D, 1 / Math.sqrt(D)),
    convWeight: uniform(rng.child("conv1d"), convDim * K, 1 / Math.sqrt(K)),
    convBias: allocPersistentF32(convDim),
    dtBias,
    aLog,
    d: allocPersistentF32(nHeads).fill(1),
    normWeight: allocPersistentF32(dInner).fill(1),
    outProj: uniform(rng.child("out_proj"), D * dInner, 1 / Math.sqrt(dInner) / Math.sqrt(nLayers)),
  };
}
