/**
 * Mamba-2 initialisation for training from scratch (model.md §3):
 *   dt0 = exp(U[ln 1e-3, ln 1e-1]) clamped at ≥ 1e-4, dt_bias = dt0 + ln(−expm1(−dt0))
 *   (inverse softplus); A_log = ln U[1, 16]; D = 1; norm weight 1; conv bias 0; in_proj,
 *   conv1d.weight, out_proj uniform ±1/sqrt(fan_in) (conv fan_in = K, depthwise); out_proj
 *   additionally divided by sqrt(nLayers). Each tensor draws from its own named child stream.
 */
import { allocF32, type Rng } from "@loop/tensor";
import type { Mamba2Config, Mamba2Dims } from "./mamba2-config.js";

export interface Mamba2InitData {
  inProj: Float32Array;
  convWeight: Float32Array;
  convBias: Float32Array;
  dtBias: Float32Array;
  aLog: Float32Array;
  d: Float32Array;
  normWeight: Float32Array;
  outProj: Float32Array;
}

function uniform(rng: Rng, n: number, bound: number): Float32Array {
  return rng.fillUniform(allocF32(n), -bound, bound);
}

export function initMamba2(
  cfg: Mamba2Config,
  dims: Mamba2Dims,
  rng: Rng,
  nLayers: number,
): Mamba2InitData {
  const { dInner, nHeads, convDim, inProjDim } = dims;
  const D = cfg.dModel;
  const K = cfg.dConv;
  const dtRng = rng.child("dt_bias");
  const dtBias = allocF32(nHeads);
  for (let h = 0; h < nHeads; h++) {
    const dt0 = Math.max(Math.exp(dtRng.uniformIn(Math.log(1e-3), Math.log(1e-1))), 1e-4);
    dtBias[h] = dt0 + Math.log(-Math.expm1(-dt0));
  }
  const aRng = rng.child("A_log");
  const aLog = allocF32(nHeads);
  for (let h = 0; h < nHeads; h++) aLog[h] = Math.log(aRng.uniformIn(1, 16));
  return {
    inProj: uniform(rng.child("in_proj"), inProjDim * D, 1 / Math.sqrt(D)),
    convWeight: uniform(rng.child("conv1d"), convDim * K, 1 / Math.sqrt(K)),
    convBias: allocF32(convDim),
    dtBias,
    aLog,
    d: allocF32(nHeads).fill(1),
    normWeight: allocF32(dInner).fill(1),
    outProj: uniform(rng.child("out_proj"), D * dInner, 1 / Math.sqrt(dInner) / Math.sqrt(nLayers)),
  };
}
