/*
 * The Mamba-2 mixer's recurrent decode step for one token per row (docs/model.md §3; the CPU's
 * @loop/ssm-kernels `mamba2StepRaw`, the GPU's webgpu `mamba2StepState`). Inference only.
 * zx [B, E] is the in_proj output z | xBC | dt (E = Di + C + H, C = Di + 2·G·N); state row
 * s = rows[b] (rows null: s = b) holds conv [S, C, K−1] (oldest first) and ssm [S, H, P, N]:
 *   mamba2_step_conv:  out[c] = bias[c] + Σ_{k<K−1} w[c,k]·conv[s,c,k] + w[c,K−1]·xBC[c];
 *                      conv[s,c,·] shifts left and takes xBC[c];  xbc[b,c] = silu(out[c]);
 *                      z[b,·] = zx[b, 0..Di) (skipped when z is null)
 *   mamba2_step_ssm:   dt = clamp(softplus(dt_raw + dt_bias[h]), lo, hi), decay = exp(−dt·e^{A_log[h]});
 *                      S[s,h,p,n] ← decay·S + dt·x[h,p]·B[g,n];  y[b,h,p] = Σ_n S·C[g,n] + D[h]·x[h,p]
 *                      (g = h / (H/G); y null: the state update alone, early exit's skipped steps)
 * One thread per (row, channel) and per (row, head, p): each state element has one writer when
 * the rows are distinct.
 *
 * Attention's decode over a KV cache kc, vc [S, Hkv, cap, hd] (docs/model.md §4; the CPU's
 * @loop/attention `appendAndAttend` for one token), q [B, Hq, hd] and k, v [B, Hkv, hd] rotated
 * at position `pos`, row b of the input in cache row s = rows[b] (null: b):
 *   kv_append:   kc[s, g, pos] = k[b, g],  vc[s, g, pos] = v[b, g]
 *   attn_decode: out[b, j] = Σ_{t ≤ pos} softmax_t(c·q[b,j]·kc[s,g,t])·vc[s,g,t],  g = j / (Hq/Hkv),
 *                c = 1/√hd; one block per (b, j), the n = pos + 1 scores in `scores` [B, Hq, n]
 */
#include "common.cuh"

KERNEL void mamba2_step_conv(int Bn, int Di, int C, int E, int K, const int *rows,
                             const float *zx, const float *w, const float *bias, float *conv,
                             float *xbc, float *z) {
  FOR_EACH(i, (long long)Bn * (Di + C)) {
    int b = (int)(i / (Di + C)), j = (int)(i % (Di + C));
    if (j < Di) {
      if (z) z[(long long)b * Di + j] = zx[(long long)b * E + j];
      continue;
    }
    int c = j - Di;
    long long s = rows ? rows[b] : b;
    float inp = zx[(long long)b * E + Di + c];
    float *st = conv + (s * C + c) * (K - 1);
    float v = bias[c] + w[c * K + K - 1] * inp;
    for (int k = 0; k < K - 1; k++) v += w[c * K + k] * st[k];
    for (int k = 0; k + 1 < K - 1; k++) st[k] = st[k + 1];
    if (K > 1) st[K - 2] = inp;
    xbc[(long long)b * C + c] = siluf_(v);
  }
}

KERNEL void mamba2_step_ssm(int Bn, int H, int P, int N, int G, int Di, int C, int E,
                            const int *rows, const float *zx, const float *xbc,
                            const float *dtBias, const float *aLog, const float *D, float *ssm,
                            float *y, float dtLo, float dtHi) {
  FOR_EACH(i, (long long)Bn * H * P) {
    int p = (int)(i % P);
    long long bh = i / P;
    int h = (int)(bh % H), b = (int)(bh / H);
    int g = h / (H / G);
    long long s = rows ? rows[b] : b;
    float dt = fminf(fmaxf(softplusf_(zx[(long long)b * E + Di + C + h] + dtBias[h]), dtLo), dtHi);
    float decay = __expf(-dt * __expf(aLog[h]));
    const float *xr = xbc + (long long)b * C;
    float xv = xr[h * P + p];
    float xp = dt * xv;
    const float *Bg = xr + Di + g * N;
    const float *Cg = xr + Di + G * N + g * N;
    float *S = ssm + ((s * H + h) * P + p) * N;
    float acc = 0.f;
    for (int n = 0; n < N; n++) {
      float v = decay * S[n] + xp * Bg[n];
      S[n] = v;
      acc += v * Cg[n];
    }
    if (y) y[(long long)b * Di + h * P + p] = acc + D[h] * xv;
  }
}

KERNEL void kv_append(int Bn, int Hkv, int hd, int cap, int pos, const int *rows,
                      const float *k, const float *v, float *kc, float *vc) {
  FOR_EACH(i, (long long)Bn * Hkv * hd) {
    int e = (int)(i % hd);
    long long bg = i / hd;
    int g = (int)(bg % Hkv), b = (int)(bg / Hkv);
    long long s = rows ? rows[b] : b;
    long long o = ((s * Hkv + g) * cap + pos) * hd + e;
    kc[o] = k[i];
    vc[o] = v[i];
  }
}

KERNEL void attn_decode(int Bn, int Hq, int Hkv, int hd, int cap, int n, float c,
                        const int *rows, const float *q, const float *kc, const float *vc,
                        float *scores, float *out) {
  __shared__ float red[32];
  int bj = blockIdx.x, j = bj % Hq, b = bj / Hq;
  long long s = rows ? rows[b] : b;
  const float *qr = q + (long long)bj * hd;
  long long base = (s * Hkv + j / (Hq / Hkv)) * (long long)cap * hd;
  float *sc = scores + (long long)bj * n;
  float mx = -LOOP_INF;
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    const float *kr = kc + base + (long long)t * hd;
    float dot = 0.f;
    for (int e = 0; e < hd; e++) dot += qr[e] * kr[e];
    sc[t] = c * dot;
    mx = fmaxf(mx, c * dot);
  }
  mx = blockMax(mx, red);
  float sum = 0.f;
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    float p = __expf(sc[t] - mx);
    sc[t] = p;
    sum += p;
  }
  sum = blockSum(sum, red);
  __syncthreads();
  for (int e = threadIdx.x; e < hd; e += blockDim.x) {
    float acc = 0.f;
    for (int t = 0; t < n; t++) acc += sc[t] * vc[base + (long long)t * hd + e];
    out[(long long)bj * hd + e] = acc / sum;
  }
}
