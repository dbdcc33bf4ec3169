/*
 * The SSD scan (docs/model.md §3.5) as its recurrence, one block per (batch, head):
 *   S_t = e^{dt_t·A_h}·S_{t−1} + dt_t·(x_t ⊗ B_t[g]),  y_t = S_t·C_t[g] + D_h·x_t,  g = ⌊h·G/H⌋
 * x [B,T,H,P], dt [B,T,H], A [H], B, C [B,T,G,N], s0 [B,H,P,N] or null, D [H] or null,
 * resets [B·T] (1 where a document starts: the carried state is dropped) or null
 * → y [B,T,H,P], final state [B,H,P,N]. The state S [N][P] lives in shared memory (thread p owns
 * column p: no bank conflicts), so a step costs 2·N·P FMAs with no reduction across threads;
 * this is the chunked scan's value (the same sums in another order), not its matmul form.
 * The forward stores the state entering every chunk of SSD_L steps (ckpt [B,H,⌈T/L⌉,N,P]); the
 * backward walks the chunks in reverse, recomputes each chunk's states into scratch
 * [B,H,L+1,N,P] and runs the reverse sweep of ssd-scan-ref.ts:
 *   dS += gy_t ⊗ C_t;  gC_t = Sᵀ_t·gy_t;  gx_t = dt·dS·B_t + D·gy_t;  gB_t = dt·dSᵀ·x_t;
 *   gdt_t = Σ dS⊙(x_t⊗B_t) + A·a·Σ dS⊙S_{t−1};  gA += dt·a·Σ dS⊙S_{t−1};  dS ← a·dS (0 at a reset)
 * gB, gC are written per head ([B,T,H,N]) and summed over each group's heads by ssd_group_sum;
 * gA, gD per (batch, head) ([B,H]), summed over the batch by col_sum: every sum in a fixed order.
 * Shared memory: (N·P + 2N + 2P + 32) floats, from the launch.
 */
#include "common.cuh"

#define SSD_L 32


KERNEL void ssd_fwd(int T, int H, int P, int G, int N, const float *x, const float *dt,
                    const float *A, const float *Bm, const float *Cm, const float *s0,
                    const float *D, const float *resets, float *y, float *state, float *ckpt) {
  extern __shared__ float sh[];
  float *S = sh, *Bs = S + N * P, *Cs = Bs + N;
  int b = blockIdx.x / H, h = blockIdx.x % H, g = h / (H / G), p = threadIdx.x;
  long long sOff = ((long long)b * H + h) * P * N;
  int nChunks = (T + SSD_L - 1) / SSD_L;
  for (int i = threadIdx.x; i < N * P; i += blockDim.x) {
    int n = i / P, q = i % P;
    S[i] = s0 ? s0[sOff + (long long)q * N + n] : 0.f;
  }
  float Ah = A[h], Dh = D ? D[h] : 0.f;
  __syncthreads();
  for (int t = 0; t < T; t++) {
    long long bt = (long long)b * T + t;
    if (ckpt && t % SSD_L == 0) {
      float *c = ckpt + (((long long)b * H + h) * nChunks + t / SSD_L) * N * P;
      for (int i = threadIdx.x; i < N * P; i += blockDim.x) c[i] = S[i];
    }
    for (int n = threadIdx.x; n < N; n += blockDim.x) {
      Bs[n] = Bm[(bt * G + g) * N + n];
      Cs[n] = Cm[(bt * G + g) * N + n];
    }
    __syncthreads();
    float dtv = dt[bt * H + h];
    float decay = (resets && resets[bt] != 0.f) ? 0.f : __expf(dtv * Ah);
    if (p < P) {
      float xv = x[(bt * H + h) * P + p], xp = dtv * xv, acc = 0.f;
      for (int n = 0; n < N; n++) {
        float s = decay * S[n * P + p] + xp * Bs[n];
        S[n * P + p] = s;
        acc += s * Cs[n];
      }
      y[(bt * H + h) * P + p] = acc + Dh * xv;
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < N * P; i += blockDim.x) {
    int n = i / P, q = i % P;
    state[sOff + (long long)q * N + n] = S[i];
  }
}

KERNEL void ssd_bwd(int T, int H, int P, int G, int N, const float *x, const float *dt,
                    const float *A, const float *Bm, const float *Cm, const float *D,
                    const float *resets, const float *gy, const float *gState,
                    const float *ckpt, float *scratch, float *gx, float *gdt, float *gBh,
                    float *gCh, float *gAbh, float *gDbh, float *gs0) {
  extern __shared__ float sh[];
  float *dS = sh, *Bs = dS + N * P, *Cs = Bs + N, *xs = Cs + N, *gys = xs + P, *red = gys + P;
  int b = blockIdx.x / H, h = blockIdx.x % H, g = h / (H / G), tid = threadIdx.x;
  long long bh = (long long)b * H + h, sOff = bh * P * N;
  int nChunks = (T + SSD_L - 1) / SSD_L;
  float *st = scratch + bh * (SSD_L + 1) * N * P;
  float Ah = A[h], Dh = D ? D[h] : 0.f, gA = 0.f, gD = 0.f;
  for (int i = tid; i < N * P; i += blockDim.x) {
    int n = i / P, q = i % P;
    dS[i] = gState ? gState[sOff + (long long)q * N + n] : 0.f;
  }
  __syncthreads();
  for (int c = nChunks - 1; c >= 0; c--) {
    int t0 = c * SSD_L, t1 = min(T, t0 + SSD_L);
    const float *ck = ckpt + (bh * nChunks + c) * N * P;
    for (int i = tid; i < N * P; i += blockDim.x) st[i] = ck[i];
    __syncthreads();
    /* recompute S_t of the chunk: st[(t − t0 + 1)·NP] = S_t, st[0] = the state entering it */
    for (int t = t0; t < t1; t++) {
      long long bt = (long long)b * T + t;
      float dtv = dt[bt * H + h];
      float decay = (resets && resets[bt] != 0.f) ? 0.f : __expf(dtv * Ah);
      const float *prev = st + (long long)(t - t0) * N * P;
      float *cur = st + (long long)(t - t0 + 1) * N * P;
      if (tid < P) {
        float xp = dtv * x[(bt * H + h) * P + tid];
        for (int n = 0; n < N; n++)
          cur[n * P + tid] = decay * prev[n * P + tid] + xp * Bm[(bt * G + g) * N + n];
      }
      __syncthreads();
    }
    for (int t = t1 - 1; t >= t0; t--) {
      long long bt = (long long)b * T + t;
      float dtv = dt[bt * H + h];
      bool reset = resets && resets[bt] != 0.f;
      float decay = reset ? 0.f : __expf(dtv * Ah);
      const float *prev = st + (long long)(t - t0) * N * P;
      const float *cur = prev + N * P;
      for (int n = tid; n < N; n += blockDim.x) {
        Bs[n] = Bm[(bt * G + g) * N + n];
        Cs[n] = Cm[(bt * G + g) * N + n];
      }
      for (int q = tid; q < P; q += blockDim.x) {
        xs[q] = x[(bt * H + h) * P + q];
        gys[q] = gy ? gy[(bt * H + h) * P + q] : 0.f;
      }
      __syncthreads();
      if (tid < P)
        for (int n = 0; n < N; n++) dS[n * P + tid] += gys[tid] * Cs[n];
      __syncthreads();
      if (tid < N) {
        float sc = 0.f, sb = 0.f;
        for (int q = 0; q < P; q++) {
          sc += gys[q] * cur[tid * P + q];
          sb += dS[tid * P + q] * xs[q];
        }
        gCh[(bt * H + h) * N + tid] = sc;
        gBh[(bt * H + h) * N + tid] = dtv * sb;
      }
      float dXB = 0.f, dDec = 0.f, gDx = 0.f;
      if (tid < P) {
        float dx = 0.f;
        for (int n = 0; n < N; n++) {
          float d = dS[n * P + tid];
          dx += d * Bs[n];
          if (!reset) dDec += d * prev[n * P + tid];
        }
        gx[(bt * H + h) * P + tid] = dtv * dx + Dh * gys[tid];
        dXB = dx * xs[tid];
        gDx = gys[tid] * xs[tid];
      }
      dXB = blockSum(dXB, red);
      dDec = blockSum(dDec, red);
      gDx = blockSum(gDx, red);
      float ea = reset ? 0.f : __expf(dtv * Ah);
      if (tid == 0) gdt[bt * H + h] = dXB + dDec * ea * Ah;
      gA += dDec * ea * dtv;
      gD += gDx;
      __syncthreads();
      if (tid < P)
        for (int n = 0; n < N; n++) dS[n * P + tid] *= decay;
      __syncthreads();
    }
  }
  if (tid == 0) {
    gAbh[bh] = gA;
    if (gDbh) gDbh[bh] = gD;
  }
  if (gs0)
    for (int i = tid; i < N * P; i += blockDim.x) {
      int n = i / P, q = i % P;
      gs0[sOff + (long long)q * N + n] = dS[i];
    }
}

/* out[bt,g,n] (+)= Σ_{h of group g} part[bt,h,n] */
KERNEL void ssd_group_sum(long long BT, int H, int G, int N, const float *part, float *out,
                          int acc) {
  FOR_EACH(i, BT * G * N) {
    int n = (int)(i % N);
    long long r = i / N;
    int g = (int)(r % G);
    long long bt = r / G;
    int hpg = H / G;
    float s = 0.f;
    for (int h = g * hpg; h < (g + 1) * hpg; h++) s += part[(bt * H + h) * N + n];
    out[i] = acc ? out[i] + s : s;
  }
}
