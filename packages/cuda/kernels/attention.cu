/*
 * RoPE and causal GQA attention (docs/model.md §4), q [B,T,Hq,hd], k, v [B,T,Hkv,hd],
 * query head j reads kv head ⌊j·Hkv/Hq⌋, scale c = 1/√hd:
 *   rope:      (x1, x2) → (x1·cos − x2·sin·sign, x2·cos + x1·sin·sign), rotate-half layout,
 *              cos/sin [T, hd/2] (sign −1: the backward)
 *   attn_fwd:  o_t = Σ_{s ≤ t, same document} softmax_s(c·q_t·k_s)·v_s, lse_t saved; one warp
 *              per (b, t, j), keys streamed with an online softmax (no T×T matrix is stored)
 *   attn_bwd_dq: Dv_t = dO_t·o_t;  dq_t = c·Σ_s p_ts·(dO_t·v_s − Dv_t)·k_s  (p recomputed from lse)
 *   attn_bwd_dkv: one warp per (b, s, kv head): dv_s = Σ_{j,t} p_ts·dO_t, dk_s = c·Σ p_ts·(dO_t·v_s − Dv_t)·q_t
 * Packed documents: starts[b·T + t] (first position of t's document) or null.
 * Each lane holds dims lane, lane+32, … (hd ≤ 32·ATT_DL).
 */
#include "common.cuh"

#define ATT_DL 8

KERNEL void rope(long long rows, int H, int hd, int T, const float *x, const float *cosT,
                 const float *sinT, float sign, float *y) {
  int half = hd / 2;
  FOR_EACH(i, rows * H * half) {
    int d = (int)(i % half);
    long long rh = i / half;
    long long r = rh / H;
    int t = (int)(r % T);
    long long o = rh * hd;
    float c = cosT[t * half + d], s = sign * sinT[t * half + d];
    float x1 = x[o + d], x2 = x[o + d + half];
    y[o + d] = x1 * c - x2 * s;
    y[o + d + half] = x2 * c + x1 * s;
  }
}

__device__ __forceinline__ float warpDot(const float *a, const float *b, int hd, int lane) {
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < ATT_DL; i++) {
    int d = lane + 32 * i;
    if (d < hd) s += a[d] * b[d];
  }
  return warpSum(s);
}

KERNEL void attn_fwd(int Bn, int T, int Hq, int Hkv, int hd, const float *q, const float *k,
                     const float *v, const int *starts, float *o, float *lse) {
  long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (w >= (long long)Bn * T * Hq) return;
  int j = (int)(w % Hq);
  long long bt = w / Hq;
  int t = (int)(bt % T), b = (int)(bt / T), kh = j * Hkv / Hq;
  float c = rsqrtf((float)hd);
  const float *qr = q + w * hd;
  float acc[ATT_DL] = {};
  float m = -LOOP_INF, l = 0.f;
  int s0 = starts ? starts[bt] : 0;
  for (int s = s0; s <= t; s++) {
    long long kr = (((long long)b * T + s) * Hkv + kh) * hd;
    float sc = c * warpDot(qr, k + kr, hd, lane);
    float mn = fmaxf(m, sc), corr = __expf(m - mn), e = __expf(sc - mn);
    l = l * corr + e;
#pragma unroll
    for (int i = 0; i < ATT_DL; i++) {
      int d = lane + 32 * i;
      if (d < hd) acc[i] = acc[i] * corr + e * v[kr + d];
    }
    m = mn;
  }
#pragma unroll
  for (int i = 0; i < ATT_DL; i++) {
    int d = lane + 32 * i;
    if (d < hd) o[w * hd + d] = acc[i] / l;
  }
  if (lane == 0) lse[w] = m + logf(l);
}

KERNEL void attn_bwd_dq(int Bn, int T, int Hq, int Hkv, int hd, const float *q, const float *k,
                        const float *v, const float *o, const float *dO, const float *lse,
                        const int *starts, float *Dv, float *dq) {
  long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (w >= (long long)Bn * T * Hq) return;
  int j = (int)(w % Hq);
  long long bt = w / Hq;
  int t = (int)(bt % T), b = (int)(bt / T), kh = j * Hkv / Hq;
  float c = rsqrtf((float)hd);
  const float *qr = q + w * hd, *gr = dO + w * hd;
  float dsum = warpDot(gr, o + w * hd, hd, lane), L = lse[w];
  if (lane == 0) Dv[w] = dsum;
  float acc[ATT_DL] = {};
  int s0 = starts ? starts[bt] : 0;
  for (int s = s0; s <= t; s++) {
    long long kr = (((long long)b * T + s) * Hkv + kh) * hd;
    float p = __expf(c * warpDot(qr, k + kr, hd, lane) - L);
    float ds = p * (warpDot(gr, v + kr, hd, lane) - dsum);
#pragma unroll
    for (int i = 0; i < ATT_DL; i++) {
      int d = lane + 32 * i;
      if (d < hd) acc[i] += ds * k[kr + d];
    }
  }
#pragma unroll
  for (int i = 0; i < ATT_DL; i++) {
    int d = lane + 32 * i;
    if (d < hd) dq[w * hd + d] = c * acc[i];
  }
}

KERNEL void attn_bwd_dkv(int Bn, int T, int Hq, int Hkv, int hd, const float *q, const float *k,
                         const float *v, const float *dO, const float *lse, const float *Dv,
                         const int *starts, float *dk, float *dv) {
  long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (w >= (long long)Bn * T * Hkv) return;
  int kh = (int)(w % Hkv);
  long long bs = w / Hkv;
  int s = (int)(bs % T), b = (int)(bs / T);
  float c = rsqrtf((float)hd);
  const float *kr = k + w * hd, *vr = v + w * hd;
  float ak[ATT_DL] = {}, av[ATT_DL] = {};
  int doc = starts ? starts[bs] : 0;
  for (int t = s; t < T; t++) {
    long long bt = (long long)b * T + t;
    if (starts && starts[bt] != doc) break;
    for (int j = 0; j < Hq; j++) {
      if (j * Hkv / Hq != kh) continue;
      long long qw = bt * Hq + j;
      const float *qr = q + qw * hd, *gr = dO + qw * hd;
      float p = __expf(c * warpDot(qr, kr, hd, lane) - lse[qw]);
      float ds = p * (warpDot(gr, vr, hd, lane) - Dv[qw]);
#pragma unroll
      for (int i = 0; i < ATT_DL; i++) {
        int d = lane + 32 * i;
        if (d < hd) {
          av[i] += p * gr[d];
          ak[i] += ds * qr[d];
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < ATT_DL; i++) {
    int d = lane + 32 * i;
    if (d < hd) {
      dk[w * hd + d] = c * ak[i];
      dv[w * hd + d] = av[i];
    }
  }
}
