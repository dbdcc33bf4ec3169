/**
 * One-token recurrent step of the Mamba-2 mixer (docs/model.md §3, decode state per layer), on raw
 * arrays, for inference. For each batch row b, with u [D]:
 *   [z, xBC, dt] = u·in_projᵀ;  conv: out[c] = bias[c] + Σ_{k<K−1} w[c,k]·conv[c,k] + w[c,K−1]·xBC[c],
 *   then the conv state shifts left and takes xBC (oldest first);  xBC ← silu(out)
 *   dt = softplus(dt + dt_bias), A = −exp(A_log);  S_h ← exp(dt_h·A_h)·S_h + dt_h·(x_h ⊗ B_g)
 *   y_h = S_h·C_g + D_h·x_h;  y ← gated RMSNorm(y, z);  out = y·out_projᵀ
 * Shapes: u [B,D], conv state [B,C,K−1], ssm state [B,H,P,N] (both updated in place) → [B,D].
 */
import { allocF32, gemm, sigmoidScalar, softplusScalar } from "@loop/tensor";
import { gatedRmsnormForward } from "./gated-rmsnorm.js";
import type { Mamba2Config, Mamba2Dims, Mamba2Weights } from "./mamba2-config.js";

export function mamba2StepRaw(
  cfg: Mamba2Config,
  dims: Mamba2Dims,
  w: Mamba2Weights,
  batch: number,
  u: Float32Array,
  conv: Float32Array,
  ssm: Float32Array,
): Float32Array {
  const { dInner: Di, nHeads: H, convDim: C, inProjDim: E } = dims;
  const { dModel: D, dState: N, headdim: P, nGroups: G, dConv: K } = cfg;
  const hpg = H / G;
  const zx = new Float32Array(batch * E);
  gemm(false, true, batch, E, D, 1, u, 0, D, w.inProj, 0, D, 0, zx, 0, E);
  const xbc = new Float32Array(C);
  const y = new Float32Array(batch * Di);
  const z = new Float32Array(batch * Di);
  for (let b = 0; b < batch; b++) {
    const row = b * E;
    z.set(zx.subarray(row, row + Di), b * Di);
    // Causal conv over (state ++ new input), then shift the state.
    for (let c = 0; c < C; c++) {
      const inp = zx[row + Di + c]!;
      const so = (b * C + c) * (K - 1);
      let v = w.convBias[c]! + w.convWeight[c * K + K - 1]! * inp;
      for (let k = 0; k < K - 1; k++) v += w.convWeight[c * K + k]! * conv[so + k]!;
      for (let k = 0; k < K - 2; k++) conv[so + k] = conv[so + k + 1]!;
      if (K > 1) conv[so + K - 2] = inp;
      xbc[c] = v * sigmoidScalar(v);
    }
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / hpg);
      const dt = softplusScalar(zx[row + Di + C + h]! + w.dtBias[h]!);
      const decay = Math.exp(-dt * Math.exp(w.aLog[h]!));
      const bo = Di + g * N;
      const co = Di + G * N + g * N;
      const so = (b * H + h) * P * N;
      for (let p = 0; p < P; p++) {
        const xv = xbc[h * P + p]!;
        const xp = dt * xv;
        let acc = 0;
        for (let n = 0; n < N; n++) {
          const s = decay * ssm[so + p * N + n]! + xp * xbc[bo + n]!;
          ssm[so + p * N + n] = s;
          acc += s * xbc[co + n]!;
        }
        y[b * Di + h * P + p] = acc + w.d[h]! * xv;
      }
    }
  }
  const normed = gatedRmsnormForward(y, z, w.normWeight, batch, Di, G, cfg.normEps);
  const out = allocF32(batch * D);
  gemm(false, true, batch, D, Di, 1, normed, 0, Di, w.outProj, 0, Di, 0, out, 0, D);
  return out;
}
