/*
 * Causal depthwise conv1d + SiLU (docs/model.md §3.2–3.3), x [B,T,C], w [C,K], bias [C],
 * init [B,C,K−1] (the previous K−1 inputs, oldest first) or null:
 *   pre[b,t,c] = bias[c] + Σ_k w[c,k]·in[b, t−K+1+k, c],  y = silu(pre)
 * Packed documents: starts[b·T + t] is the first position of t's document (null: 0); a row reads
 * taps τ ≥ starts, and the initial state only when its document starts at 0.
 * Backward: gpre = gy·silu'(pre) (pre recomputed), then gx[τ] = Σ_k w[c,k]·gpre[τ+K−1−k] over
 * the rows that read τ, gw[c,k] = Σ_{b,t} gpre·in (one thread per weight, rows in order),
 * gbias = Σ gpre (col_sum), ginit likewise from the rows that read it.
 */
#include "common.cuh"

__device__ __forceinline__ float convTap(const float *x, const float *init, const int *starts,
                                         int b, int t, int tau, int c, int T, int C, int K) {
  int st = starts ? starts[(long long)b * T + t] : 0;
  if (tau >= 0) return tau >= st ? x[((long long)b * T + tau) * C + c] : 0.f;
  return (init && st == 0) ? init[((long long)b * C + c) * (K - 1) + K - 1 + tau] : 0.f;
}

__device__ __forceinline__ float convPre(const float *x, const float *w, const float *bias,
                                         const float *init, const int *starts, int b, int t,
                                         int c, int T, int C, int K) {
  float s = bias ? bias[c] : 0.f;
  for (int k = 0; k < K; k++) s += w[c * K + k] * convTap(x, init, starts, b, t, t - K + 1 + k, c, T, C, K);
  return s;
}

KERNEL void conv_silu_fwd(int Bn, int T, int C, int K, const float *x, const float *w,
                          const float *bias, const float *init, const int *starts, float *y) {
  FOR_EACH(i, (long long)Bn * T * C) {
    int c = (int)(i % C);
    long long bt = i / C;
    int t = (int)(bt % T), b = (int)(bt / T);
    y[i] = siluf_(convPre(x, w, bias, init, starts, b, t, c, T, C, K));
  }
}

/* gpre = gy·silu'(pre), written over gy's layout */
KERNEL void conv_silu_gpre(int Bn, int T, int C, int K, const float *x, const float *w,
                           const float *bias, const float *init, const int *starts,
                           const float *gy, float *gpre) {
  FOR_EACH(i, (long long)Bn * T * C) {
    int c = (int)(i % C);
    long long bt = i / C;
    int t = (int)(bt % T), b = (int)(bt / T);
    gpre[i] = gy[i] * dsiluf_(convPre(x, w, bias, init, starts, b, t, c, T, C, K));
  }
}

KERNEL void conv_bwd_x(int Bn, int T, int C, int K, const float *w, const int *starts,
                       const float *gpre, float *gx, int acc) {
  FOR_EACH(i, (long long)Bn * T * C) {
    int c = (int)(i % C);
    long long bt = i / C;
    int tau = (int)(bt % T), b = (int)(bt / T);
    float s = 0.f;
    for (int k = 0; k < K; k++) {
      int t = tau + K - 1 - k;
      if (t >= T) continue;
      if (starts && starts[(long long)b * T + t] > tau) continue;
      s += w[c * K + k] * gpre[((long long)b * T + t) * C + c];
    }
    gx[i] = acc ? gx[i] + s : s;
  }
}

KERNEL void conv_bwd_w(int Bn, int T, int C, int K, const float *x, const float *init,
                       const int *starts, const float *gpre, float *gw, int acc) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= C * K) return;
  int c = i / K, k = i % K;
  float s = 0.f;
  for (int b = 0; b < Bn; b++)
    for (int t = 0; t < T; t++)
      s += gpre[((long long)b * T + t) * C + c] * convTap(x, init, starts, b, t, t - K + 1 + k, c, T, C, K);
  gw[i] = acc ? gw[i] + s : s;
}

/* ginit[b,c,j] (j < K−1, τ = j − (K−1)) = Σ_k w[c,k]·gpre[b, τ+K−1−k, c] over rows of document 0 */
KERNEL void conv_bwd_init(int Bn, int T, int C, int K, const float *w, const int *starts,
                          const float *gpre, float *ginit, int acc) {
  FOR_EACH(i, (long long)Bn * C * (K - 1)) {
    int j = (int)(i % (K - 1));
    long long bc = i / (K - 1);
    int c = (int)(bc % C), b = (int)(bc / C);
    int tau = j - (K - 1);
    float s = 0.f;
    for (int k = 0; k < K; k++) {
      int t = tau + K - 1 - k;
      if (t < 0 || t >= T) continue;
      if (starts && starts[(long long)b * T + t] != 0) continue;
      s += w[c * K + k] * gpre[((long long)b * T + t) * C + c];
    }
    ginit[i] = acc ? ginit[i] + s : s;
  }
}
