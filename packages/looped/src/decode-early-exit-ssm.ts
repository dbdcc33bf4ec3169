/**
 * SSM state propagation for Mamba-2 layers that an exited token skips (early-exit decoding with
 * `skipped: "propagate"`): the skipped layer's decode state takes the token in, fed the token's
 * exit hidden state h(z), but nothing is read out. The state-update half of the docs/model.md §3
 * recurrent step, per batch row b in `rows`:
 *   u = rmsnorm(h(z), layer.norm);  [xBC, dt] = u·in_proj[Di : 2Di+2G·Ns+H]ᵀ   (z rows not needed)
 *   conv: out[c] = bias[c] + Σ_{k<K−1} w[c,k]·conv[c,k] + w[c,K−1]·xBC[c]; conv state shifts, takes xBC
 *   xBC ← silu(out);  dt = softplus(dt + dt_bias);  S_h ← exp(−dt_h·exp(A_log_h))·S_h + dt_h·(x_h ⊗ B_g)
 * Skipped: the z projection, y = S·C + D·x, the gated norm, out_proj and the residual add.
 * FLOPs per token: 2D(Di+2G·Ns+H) + 2K(Di+2G·Ns) + 3·Di·Ns (about half a layer at small D).
 * Shapes: h [rows.length, D]; state conv [B, C, K−1], ssm [B, H, P, Ns], updated in place.
 */
import { Mamba2Mixer, type Mamba2State } from "@loop/ssm-kernels";
import { gemm, rmsnorm, sigmoidScalar, softplusScalar, type Tensor } from "@loop/tensor";
import type { Layer } from "./layer.js";

export function propagateSsmState(
  layer: Layer,
  state: Mamba2State,
  h: Tensor,
  rows: readonly number[],
  eps: number,
): void {
  const mixer = layer.mixer;
  if (!(mixer instanceof Mamba2Mixer))
    throw new Error("propagateSsmState: layer must have a Mamba-2 mixer, got an attention mixer");
  const n = rows.length;
  if (h.shape[0] !== n)
    throw new Error(
      `propagateSsmState: h must have ${n} rows (one per row index), got ${h.shape[0]}`,
    );
  const { dInner: Di, nHeads: H, convDim: C } = mixer;
  const { dModel: D, dState: N, headdim: P, nGroups: G, dConv: K } = mixer.cfg;
  const hpg = H / G;
  const u = rmsnorm(h, layer.norm, eps).data;
  const W = C + H; // xBC and dt columns, contiguous rows of in_proj after the z rows
  const xdt = new Float32Array(n * W);
  gemm(false, true, n, W, D, 1, u, 0, D, mixer.inProj.data, Di * D, D, 0, xdt, 0, W);
  const convW = mixer.convWeight.data;
  const convB = mixer.convBias.data;
  const dtBias = mixer.dtBias.data;
  const aLog = mixer.aLog.data;
  const xbc = new Float32Array(C);
  rows.forEach((b, j) => {
    const row = j * W;
    for (let c = 0; c < C; c++) {
      const inp = xdt[row + c]!;
      const so = (b * C + c) * (K - 1);
      let v = convB[c]! + convW[c * K + K - 1]! * inp;
      for (let k = 0; k < K - 1; k++) v += convW[c * K + k]! * state.conv[so + k]!;
      for (let k = 0; k < K - 2; k++) state.conv[so + k] = state.conv[so + k + 1]!;
      if (K > 1) state.conv[so + K - 2] = inp;
      xbc[c] = v * sigmoidScalar(v);
    }
    for (let hh = 0; hh < H; hh++) {
      const g = Math.floor(hh / hpg);
      const dt = softplusScalar(xdt[row + C + hh]! + dtBias[hh]!);
      const decay = Math.exp(-dt * Math.exp(aLog[hh]!));
      const bo = Di + g * N;
      const so = (b * H + hh) * P * N;
      for (let p = 0; p < P; p++) {
        const xp = dt * xbc[hh * P + p]!;
        for (let s = 0; s < N; s++)
          state.ssm[so + p * N + s] = decay * state.ssm[so + p * N + s]! + xp * xbc[bo + s]!;
      }
    }
  });
}
