/*
 * The optimiser's kernels (@loop/tensor's TrainOps):
 *   sum_squares: parts[off + blk] = Σ g² over block blk of 1024 elements (fixed order)
 *   norm_finish: norm[0] = sqrt(Σ parts) (one block)
 *   adamw:       with f = maxNorm/(norm + 1e-6) when norm is finite and above maxNorm (else 1)
 *                and g' = f·g:  m ← β1·m + (1−β1)·g',  v ← β2·v + (1−β2)·g'²,
 *                w ← w·decay − stepSize·m/(sqrt(v)·sc2 + eps); nothing when guard[0] = 0
 *   guard_finite: guard[0] ← 0 when an element of values is not finite
 *   scale_clip:  g ← f·g (the clipping applied to a gradient that something else reads)
 */
#include "common.cuh"

#define SQ_BLOCK 1024

KERNEL void __launch_bounds__(256) sum_squares(long long n, const float *g, float *parts,
                                               long long off) {
  __shared__ float scratch[32];
  long long base = blockIdx.x * (long long)SQ_BLOCK;
  float s = 0.f;
  for (long long i = base + threadIdx.x; i < base + SQ_BLOCK && i < n; i += blockDim.x)
    s += g[i] * g[i];
  s = blockSum(s, scratch);
  if (threadIdx.x == 0) parts[off + blockIdx.x] = s;
}

KERNEL void __launch_bounds__(256) norm_finish(long long count, const float *parts, float *norm) {
  __shared__ float scratch[32];
  float s = 0.f;
  for (long long i = threadIdx.x; i < count; i += blockDim.x) s += parts[i];
  s = blockSum(s, scratch);
  if (threadIdx.x == 0) norm[0] = sqrtf(s);
}

__device__ __forceinline__ float clipFactor(const float *norm, float maxNorm) {
  if (!norm) return 1.f;
  float nv = norm[0];
  return (isfinite(nv) && nv > maxNorm) ? maxNorm / (nv + 1e-6f) : 1.f;
}

KERNEL void adamw(long long n, float *w, const float *g, float *m, float *v, float decay,
                  float stepSize, float beta1, float beta2, float eps, float sc2,
                  const float *guard, const float *norm, float maxNorm) {
  if (guard && guard[0] == 0.f) return;
  float f = clipFactor(norm, maxNorm);
  FOR_EACH(i, n) {
    float gi = f * g[i];
    float mi = beta1 * m[i] + (1.f - beta1) * gi;
    float vi = beta2 * v[i] + (1.f - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] = w[i] * decay - stepSize * mi / (sqrtf(vi) * sc2 + eps);
  }
}

KERNEL void guard_finite(long long n, const float *values, float *guard) {
  FOR_EACH(i, n) if (!isfinite(values[i])) guard[0] = 0.f;
}

KERNEL void scale_clip(long long n, float *g, const float *norm, float maxNorm) {
  float f = clipFactor(norm, maxNorm);
  FOR_EACH(i, n) g[i] *= f;
}
