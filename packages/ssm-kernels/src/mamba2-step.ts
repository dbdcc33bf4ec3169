/*
 * One-token recurrent step of the Mamba-2 mixer (docs/model.md §3, decode state per layer), on raw
 * arrays, for inference. For each batch row b, with u [D]:
 *   [z, xBC, dt] = u·in_projᵀ;  conv: out[c] = bias[c] + Σ_{k<K−1} w[c,k]·conv[c,k] + w[c,K−1]·xBC[c],
 *   then the conv state shifts left and takes xBC (oldest first);  xBC ← silu(out)
 *   dt = clamp(softplus(dt + dt_bias), lo, hi) (cfg.dtLimit), A = −exp(A_log);
 *   S_h ← exp(dt_h·A_h)·S_h + dt_h·(x_h ⊗ B_g);  y_h = S_h·C_g + D_h·x_h
 *   y ← gated RMSNorm(y, z) (over normGroups groups of channels);  out = y·out_projᵀ
 * Shapes: u [B,D], conv state [B,C,K−1], ssm state [B,H,P,N] (both updated in place) → [B,D].
 *
 * `mamba2AbsorbRaw` is the state-update half alone, for batch rows that take a token into their
 * state without reading anything out (early-exit decoding's skipped steps): only the xBC and dt
 * columns of in_proj, the conv and the SSM update; no z, no y = S·C + D·x, no gated norm, no
 * out_proj. FLOPs per token: 2D(Di+2G·Ns+H) + 2K(Di+2G·Ns) + 3·Di·Ns, about half a step.
 *
 * A registered native kernel (native/mamba2-step.c `step`, group `mamba2Step`) does either in
 * one call; these loops stay as fallback and reference.
 */
import {
  allocF32,
  allocF32Uninit,
  gemm,
  kernelSet,
  sigmoidScalar,
  softplusScalar,
} from "@loop/tensor/kernel";
import { gatedRmsnormForward } from "./gated-rmsnorm.js";
import {
  dtLimitOf,
  type Mamba2Config,
  type Mamba2Dims,
  type Mamba2Weights,
  normGroupsOf,
} from "./mamba2-config.js";

/**
 * native/mamba2-step.c step(n, S, D, P, N, G, K, Di, eps, u, in_proj, conv_w, conv_b, dt_bias,
 * A_log, D, norm_w, out_proj, conv, ssm, rows, out, preNorm, preEps, dtLo, dtHi, normG): the
 * step of n input rows into state rows `rows` (null: 0..n−1) of S; without out, the state
 * update alone (absorb); with preNorm [D], the pre-norm residual layer around it (u is h;
 * out = h + step(rmsnorm(h))); dt clamped to [dtLo, dtHi]; the gated norm over normG groups.
 */
export type Mamba2StepNative = (
  n: number,
  S: number,
  D: number,
  P: number,
  N: number,
  G: number,
  K: number,
  Di: number,
  eps: number,
  u: Float32Array,
  inProj: Float32Array,
  convWeight: Float32Array,
  convBias: Float32Array,
  dtBias: Float32Array,
  aLog: Float32Array,
  d: Float32Array,
  normWeight: Float32Array,
  outProj: Float32Array,
  conv: Float32Array,
  ssm: Float32Array,
  rows: Int32Array | null,
  out: Float32Array | null,
  preNorm: Float32Array | null,
  preEps: number,
  dtLo: number,
  dtHi: number,
  normG: number,
) => void;

/** The native step of n rows (see Mamba2StepNative); `nat` is the registered kernel. */
function nativeStep(
  nat: Mamba2StepNative,
  cfg: Mamba2Config,
  dims: Mamba2Dims,
  w: Mamba2Weights,
  n: number,
  S: number,
  u: Float32Array,
  conv: Float32Array,
  ssm: Float32Array,
  rows: Int32Array | null,
  out: Float32Array | null,
  pre: { weight: Float32Array; eps: number } | null = null,
): void {
  const { dModel: D, headdim: P, dState: N, nGroups: G, dConv: K, normEps } = cfg;
  nat(
    n,
    S,
    D,
    P,
    N,
    G,
    K,
    dims.dInner,
    normEps,
    u,
    w.inProj,
    w.convWeight,
    w.convBias,
    w.dtBias,
    w.aLog,
    w.d,
    w.normWeight,
    w.outProj,
    conv,
    ssm,
    rows,
    out,
    pre?.weight ?? null,
    pre?.eps ?? 0,
    ...dtLimitOf(cfg),
    normGroupsOf(cfg),
  );
}

/**
 * The pre-norm residual layer around the mixer for one token in one native call: h [B,D] →
 * h + step(rmsnorm(h)·preNorm) with rmsnorm(h) = h/√(mean h² + eps) (docs/model.md §2), states
 * advanced in place; null when the native kernel is not registered (then the caller composes
 * rmsnorm, the step and the add, which is also the reference).
 */
export function mamba2ResidualStepNative(
  cfg: Mamba2Config,
  dims: Mamba2Dims,
  w: Mamba2Weights,
  batch: number,
  h: Float32Array,
  preNorm: Float32Array,
  preEps: number,
  conv: Float32Array,
  ssm: Float32Array,
): Float32Array | null {
  const nat = kernelSet("mamba2Step")?.step;
  if (!nat) return null;
  const out = allocF32Uninit(batch * cfg.dModel); // (the kernel writes every element)
  nativeStep(nat, cfg, dims, w, batch, batch, h, conv, ssm, null, out, {
    weight: preNorm,
    eps: preEps,
  });
  return out;
}

/**
 * Conv and SSM state update of state row b from its projected xBC (xdt[xo .. xo+C)) and dt
 * (xdt[xo+C .. xo+C+H)); xbc [C] is scratch. With y, also y_h = S_h·C_g + D_h·x_h at y[yo ..].
 */
function updateRow(
  cfg: Mamba2StateSizes,
  dims: Mamba2Dims,
  w: Mamba2StateWeights,
  xdt: Float32Array,
  xo: number,
  b: number,
  conv: Float32Array,
  ssm: Float32Array,
  xbc: Float32Array,
  y: Float32Array | null,
  yo: number,
): void {
  const { dInner: Di, nHeads: H, convDim: C } = dims;
  const { dState: N, headdim: P, nGroups: G, dConv: K } = cfg;
  const hpg = H / G;
  const [lo, hi] = dtLimitOf(cfg);
  // Causal conv over (state ++ new input), then shift the state.
  for (let c = 0; c < C; c++) {
    const inp = xdt[xo + c]!;
    const so = (b * C + c) * (K - 1);
    let v = w.convBias[c]! + w.convWeight[c * K + K - 1]! * inp;
    for (let k = 0; k < K - 1; k++) v += w.convWeight[c * K + k]! * conv[so + k]!;
    for (let k = 0; k < K - 2; k++) conv[so + k] = conv[so + k + 1]!;
    if (K > 1) conv[so + K - 2] = inp;
    xbc[c] = v * sigmoidScalar(v);
  }
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / hpg);
    const sp = softplusScalar(xdt[xo + C + h]! + w.dtBias[h]!);
    const dt = Math.min(Math.max(sp, lo), hi);
    const decay = Math.exp(-dt * Math.exp(w.aLog[h]!));
    const bo = Di + g * N;
    const co = Di + G * N + g * N;
    const so = (b * H + h) * P * N;
    for (let p = 0; p < P; p++) {
      const xv = xbc[h * P + p]!;
      const xp = dt * xv;
      if (!y) {
        for (let n = 0; n < N; n++)
          ssm[so + p * N + n] = decay * ssm[so + p * N + n]! + xp * xbc[bo + n]!;
        continue;
      }
      let acc = 0;
      for (let n = 0; n < N; n++) {
        const s = decay * ssm[so + p * N + n]! + xp * xbc[bo + n]!;
        ssm[so + p * N + n] = s;
        acc += s * xbc[co + n]!;
      }
      y[yo + h * P + p] = acc + w.d[h]! * xv;
    }
  }
}

/** What `updateRow` reads of the weights: the conv, dt bias, A_log and D. */
export type Mamba2StateWeights = Pick<
  Mamba2Weights,
  "convWeight" | "convBias" | "dtBias" | "aLog" | "d"
>;

/** What `updateRow` reads of the config. */
type Mamba2StateSizes = Pick<Mamba2Config, "dState" | "headdim" | "nGroups" | "dConv" | "dtLimit">;

/**
 * The state half of a step from its in_proj output: zx [n, E] (z | xBC | dt) of input rows j
 * advance state rows rows[j] (null: j) of conv and ssm in place; returns y (the D skip added)
 * and z, both [n, Di], or null with `absorb` (the state update alone). The loops of
 * `mamba2StepRaw`'s fallback, so a backend's decode step on the CPU gives its numbers.
 */
export function mamba2StateStepRaw(
  cfg: Mamba2StateSizes,
  w: Mamba2StateWeights,
  n: number,
  zx: Float32Array,
  rows: ArrayLike<number> | null,
  conv: Float32Array,
  ssm: Float32Array,
  absorb = false,
): { y: Float32Array; z: Float32Array } | null {
  const H = w.dtBias.length;
  const Di = H * cfg.headdim;
  const C = Di + 2 * cfg.nGroups * cfg.dState;
  const E = Di + C + H;
  const dims: Mamba2Dims = { dInner: Di, nHeads: H, convDim: C, inProjDim: E };
  const xbc = new Float32Array(C);
  const y = absorb ? null : new Float32Array(n * Di);
  const z = absorb ? null : new Float32Array(n * Di);
  for (let j = 0; j < n; j++) {
    z?.set(zx.subarray(j * E, j * E + Di), j * Di);
    updateRow(cfg, dims, w, zx, j * E + Di, rows ? rows[j]! : j, conv, ssm, xbc, y, j * Di);
  }
  return y && z ? { y, z } : null;
}

/**
 * One recurrent Mamba-2 step on raw arrays: input u [B, D] to output, updating the conv and SSM
 * states in place (the fast decode path).
 */
export function mamba2StepRaw(
  cfg: Mamba2Config,
  dims: Mamba2Dims,
  w: Mamba2Weights,
  batch: number,
  u: Float32Array,
  conv: Float32Array,
  ssm: Float32Array,
): Float32Array {
  const { dInner: Di, convDim: C, inProjDim: E } = dims;
  const D = cfg.dModel;
  const nat = kernelSet("mamba2Step")?.step;
  if (nat) {
    const out = allocF32Uninit(batch * D); // (the kernel writes every element)
    nativeStep(nat, cfg, dims, w, batch, batch, u, conv, ssm, null, out);
    return out;
  }
  const zx = new Float32Array(batch * E);
  gemm(false, true, batch, E, D, 1, u, 0, D, w.inProj, 0, D, 0, zx, 0, E);
  const xbc = new Float32Array(C);
  const y = new Float32Array(batch * Di);
  const z = new Float32Array(batch * Di);
  for (let b = 0; b < batch; b++) {
    const row = b * E;
    z.set(zx.subarray(row, row + Di), b * Di);
    updateRow(cfg, dims, w, zx, row + Di, b, conv, ssm, xbc, y, b * Di);
  }
  const normed = gatedRmsnormForward(y, z, w.normWeight, batch, Di, normGroupsOf(cfg), cfg.normEps);
  const out = allocF32(batch * D);
  gemm(false, true, batch, D, Di, 1, normed, 0, Di, w.outProj, 0, Di, 0, out, 0, D);
  return out;
}

/**
 * The state update of `mamba2StepRaw` alone (see the header) for the state rows `rows`:
 * u [rows.length, D] (row j is state row rows[j]); conv, ssm updated in place, nothing returned.
 */
export function mamba2AbsorbRaw(
  cfg: Mamba2Config,
  dims: Mamba2Dims,
  w: Mamba2Weights,
  rows: readonly number[],
  u: Float32Array,
  conv: Float32Array,
  ssm: Float32Array,
): void {
  const { dInner: Di, nHeads: H, convDim: C } = dims;
  const D = cfg.dModel;
  const n = rows.length;
  const nat = kernelSet("mamba2Step")?.step;
  if (nat) {
    const S = ssm.length / (H * cfg.headdim * cfg.dState);
    nativeStep(nat, cfg, dims, w, n, S, u, conv, ssm, Int32Array.from(rows), null);
    return;
  }
  const W = C + H; // xBC and dt columns: contiguous rows of in_proj after the z rows
  const xdt = new Float32Array(n * W);
  gemm(false, true, n, W, D, 1, u, 0, D, w.inProj, Di * D, D, 0, xdt, 0, W);
  const xbc = new Float32Array(C);
  rows.forEach((b, j) => {
    updateRow(cfg, dims, w, xdt, j * W, b, conv, ssm, xbc, null, 0);
  });
}
