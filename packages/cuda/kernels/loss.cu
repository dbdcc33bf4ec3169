/*
 * The loss kernels (TensorOps.ceRows, maskedMean): per-row cross-entropy, one block of 256
 * threads per row of logits [M, V], and the mean over the counted targets, one block. The
 * objectives above them (the mean cross-entropy, the exit gate's stage losses) are written once
 * over these, in @loop/tensor and @loop/exit-gate.
 *   ce_rows:    lse[m] = logsumexp(logits[m,:]), loss[m] = lse[m] − logits[m, t_m]
 *               (0 where t_m = −100, the ignored target; NaN for a target outside [0, V))
 *   ce_rows_bwd: glogits[m,:] (+)= gce[m]·(softmax(logits[m,:]) − onehot(t_m)), 0 on ignored rows
 *               (lse from the forward: no second pass over the row for it)
 *   masked_mean: out[0] = Σ_{m: t_m ≠ −100} vals[m] / N, count[0] = N (NaN when N = 0);
 *               one block, fixed order (the same bits every run)
 *   masked_mean_bwd: gx[m] = g[0]/N for counted m, else 0; 0 everywhere when N = 0 (reads N
 *               from the forward's count on the device: no read-back)
 */
#include "common.cuh"

#define IGNORE (-100)

KERNEL void __launch_bounds__(256) ce_rows(int V, const float *logits, const int *targets,
                                           float *loss, float *lse) {
  __shared__ float scratch[32];
  const float *x = logits + (long long)blockIdx.x * V;
  float mx = -LOOP_INF;
  for (int j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, x[j]);
  mx = blockMax(mx, scratch);
  float s = 0.f;
  for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(x[j] - mx);
  s = blockSum(s, scratch);
  if (threadIdx.x == 0) {
    float l = mx + logf(s);
    int t = targets[blockIdx.x];
    lse[blockIdx.x] = l;
    /* a target outside [0, V) other than the ignored one: NaN, not an out-of-bounds read */
    loss[blockIdx.x] = t == IGNORE ? 0.f : (t < 0 || t >= V) ? LOOP_NAN : l - x[t];
  }
}

KERNEL void __launch_bounds__(256) masked_mean(long long M, const int *targets, const float *vals,
                                               float *out, float *count) {
  __shared__ float scratch[32];
  float s = 0.f, c = 0.f;
  for (long long m = threadIdx.x; m < M; m += blockDim.x)
    if (targets[m] != IGNORE) {
      s += vals[m];
      c += 1.f;
    }
  s = blockSum(s, scratch);
  c = blockSum(c, scratch);
  if (threadIdx.x == 0) {
    out[0] = c == 0.f ? LOOP_NAN : s / c;
    count[0] = c;
  }
}

KERNEL void masked_mean_bwd(long long M, const int *targets, const float *g, const float *count,
                            float *gx) {
  FOR_EACH(m, M) gx[m] = (targets[m] != IGNORE && count[0] > 0.f) ? g[0] / count[0] : 0.f;
}

KERNEL void __launch_bounds__(256) ce_rows_bwd(int V, const float *gce, const float *logits,
                                               const int *targets, const float *lse, float *gx,
                                               int acc) {
  long long o = (long long)blockIdx.x * V;
  int t = targets[blockIdx.x];
  float s = t == IGNORE ? 0.f : gce[blockIdx.x], l = lse[blockIdx.x];
  for (int j = threadIdx.x; j < V; j += blockDim.x) {
    float v = s * (expf(logits[o + j] - l) - (j == t ? 1.f : 0.f));
    gx[o + j] = acc ? gx[o + j] + v : v;
  }
}
