/*
 * RMSNorm and gated RMSNorm (docs/model.md §2, §3.6), one block of 256 threads per row:
 *   rmsnorm:  y[r,:] = x[r,:]·w / rms,  rms = sqrt(mean(x[r,:]²) + eps),  rstd[r] = 1/rms saved
 *   backward: x̂ = x·rstd, gx = rstd·(g⊙w − x̂·mean(g⊙w⊙x̂)); gw[j] = Σ_r g[r,j]·x̂[r,j] (norm_wgrad,
 *             one thread per column, rows in order: deterministic)
 *   gated:    v = y ⊙ silu(z), normalised over each of `groups` groups of D/groups columns,
 *             out = v·rstd_g·w; rstd [rows·groups] saved. Backward as rmsnorm on v per group,
 *             then gy = gv·silu(z), gz = gv·y·silu'(z).
 */
#include "common.cuh"

KERNEL void __launch_bounds__(256) rmsnorm_fwd(int D, float eps, const float *x, const float *w,
                                               float *y, float *rstd) {
  __shared__ float scratch[32];
  const float *xr = x + (long long)blockIdx.x * D;
  float *yr = y + (long long)blockIdx.x * D;
  float s = 0.f;
  for (int j = threadIdx.x; j < D; j += blockDim.x) s += xr[j] * xr[j];
  float r = rsqrtf(blockSum(s, scratch) / D + eps);
  for (int j = threadIdx.x; j < D; j += blockDim.x) yr[j] = xr[j] * r * w[j];
  if (threadIdx.x == 0) rstd[blockIdx.x] = r;
}

KERNEL void __launch_bounds__(256) rmsnorm_bwd(int D, const float *g, const float *x,
                                               const float *w, const float *rstd, float *gx,
                                               int acc) {
  __shared__ float scratch[32];
  long long o = (long long)blockIdx.x * D;
  float r = rstd[blockIdx.x];
  float s = 0.f;
  for (int j = threadIdx.x; j < D; j += blockDim.x) s += g[o + j] * w[j] * x[o + j] * r;
  float mean = blockSum(s, scratch) / D;
  for (int j = threadIdx.x; j < D; j += blockDim.x) {
    float v = r * (g[o + j] * w[j] - x[o + j] * r * mean);
    gx[o + j] = acc ? gx[o + j] + v : v;
  }
}

/* gw[j] (+)= Σ_r g[r,j]·x[r,j]·rstd[r·groups + j/(D/groups)] (x: the normalised input, or v) */
KERNEL void norm_wgrad(long long rows, int D, int groups, const float *g, const float *x,
                       const float *rstd, float *gw, int acc) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= D) return;
  int grp = j / (D / groups);
  float s = 0.f;
  for (long long r = 0; r < rows; r++) s += g[r * D + j] * x[r * D + j] * rstd[r * groups + grp];
  gw[j] = acc ? gw[j] + s : s;
}

/* grid (rows, groups); v = y·silu(z) also stored (the weight gradient reads it) */
KERNEL void __launch_bounds__(256) gated_rmsnorm_fwd(int D, int groups, float eps, const float *y,
                                                     const float *z, const float *w, float *out,
                                                     float *v, float *rstd) {
  __shared__ float scratch[32];
  int Dg = D / groups;
  long long o = (long long)blockIdx.x * D + (long long)blockIdx.y * Dg;
  float s = 0.f;
  for (int j = threadIdx.x; j < Dg; j += blockDim.x) {
    float t = y[o + j] * siluf_(z[o + j]);
    v[o + j] = t;
    s += t * t;
  }
  float r = rsqrtf(blockSum(s, scratch) / Dg + eps);
  for (int j = threadIdx.x; j < Dg; j += blockDim.x)
    out[o + j] = v[o + j] * r * w[blockIdx.y * Dg + j];
  if (threadIdx.x == 0) rstd[(long long)blockIdx.x * groups + blockIdx.y] = r;
}

KERNEL void __launch_bounds__(256) gated_rmsnorm_bwd(int D, int groups, const float *g,
                                                     const float *y, const float *z,
                                                     const float *w, const float *v,
                                                     const float *rstd, float *gy, float *gz) {
  __shared__ float scratch[32];
  int Dg = D / groups;
  long long o = (long long)blockIdx.x * D + (long long)blockIdx.y * Dg;
  const float *wg = w + blockIdx.y * Dg;
  float r = rstd[(long long)blockIdx.x * groups + blockIdx.y];
  float s = 0.f;
  for (int j = threadIdx.x; j < Dg; j += blockDim.x) s += g[o + j] * wg[j] * v[o + j] * r;
  float mean = blockSum(s, scratch) / Dg;
  for (int j = threadIdx.x; j < Dg; j += blockDim.x) {
    float gv = r * (g[o + j] * wg[j] - v[o + j] * r * mean);
    float zz = z[o + j];
    if (gy) gy[o + j] = gv * siluf_(zz);
    if (gz) gz[o + j] = gv * y[o + j] * dsiluf_(zz);
  }
}
