/*
 * Elementwise kernels and their gradients, over flat arrays of n elements (grid-stride):
 *   binary_bcast: y[i] = a[i] ∘ b[i mod nb], ∘ by `kind` 0 +, 1 −, 2 ⊙ (b broadcast over the
 *               leading axes; nb = n: plain). The backward of ⊙ is ⊙ itself (g·b, g·a), then
 *               col_sum for a broadcast b
 *   axpy:       y[i] = y[i]·beta + alpha·x[i]        (gradient accumulation, scaling: x may be y)
 *   affine_fwd: y = x·s + c;       backward: gx = s·g (axpy)
 *   fill:       y[i] = v
 *   exp_fwd:    y = eˣ;            mul_bwd:   gx = g·y (the gradient of eˣ and of −eˣ alike)
 *   sigmoid_fwd: y = σ(x);         sigmoid_bwd: gx = g·y·(1 − y)
 *   negexp_fwd: y = −eˣ;           backward: mul_bwd
 *   logsigmoid_fwd: y = −softplus(−x) = min(x, 0) − log1p(e^(−|x|)) (no overflow, no
 *               cancellation at any |x|); logsigmoid_bwd: gx = g·σ(−x)
 *   relu_fwd:   y = max(x, 0);     relu_bwd: gx = g where y > 0 (x > 0), else 0
 *   softplus_bias_fwd: y[r,j] = clamp(softplus(raw[r,j] + bias[j]), lo, hi) when `clamped` (dt's
 *               time_step_limit; NaN stays NaN), else the softplus alone;
 *               bwd: graw = g·σ(raw + bias) where the softplus lies within [lo, hi], else 0
 *   swiglu_fwd: y = silu(gate)·up; bwd: ggate = g·up·silu'(gate), gup = g·silu(gate)
 *   copy_cols:  dst[r, dOff + j] = (acc ? dst : 0) + src[r, sOff + j], j < w, r < rows
 *               (split and concat along the last axis, linearSplit's pieces: a strided copy
 *               each way)
 *   col_sum:    y[j] = (acc ? y[j] : 0) + Σ_r x[r, j]  (bias and broadcast gradients; rows summed
 *               in order by one thread per column: deterministic)
 */
#include "common.cuh"

KERNEL void binary_bcast(long long n, long long nb, int kind, const float *a, const float *b,
                         float *y) {
  FOR_EACH(i, n) {
    float u = a[i], v = b[i % nb];
    y[i] = kind == 0 ? u + v : kind == 1 ? u - v : u * v;
  }
}
KERNEL void axpy(long long n, float alpha, const float *x, float beta, float *y) {
  FOR_EACH(i, n) y[i] = (beta == 0.f ? 0.f : beta * y[i]) + alpha * x[i];
}
KERNEL void affine_fwd(long long n, float s, float c, const float *x, float *y) {
  FOR_EACH(i, n) y[i] = x[i] * s + c;
}
KERNEL void fill(long long n, float v, float *y) {
  FOR_EACH(i, n) y[i] = v;
}
KERNEL void exp_fwd(long long n, const float *x, float *y) {
  FOR_EACH(i, n) y[i] = expf(x[i]);
}
/* (y holds the output) */
KERNEL void mul_bwd(long long n, int acc, const float *g, const float *y, float *gx) {
  FOR_EACH(i, n) gx[i] = (acc ? gx[i] : 0.f) + g[i] * y[i];
}
KERNEL void sigmoid_fwd(long long n, const float *x, float *y) {
  FOR_EACH(i, n) y[i] = sigmoidf_(x[i]);
}
KERNEL void sigmoid_bwd(long long n, int acc, const float *g, const float *y, float *gx) {
  FOR_EACH(i, n) gx[i] = (acc ? gx[i] : 0.f) + g[i] * y[i] * (1.f - y[i]);
}
KERNEL void negexp_fwd(long long n, const float *x, float *y) {
  FOR_EACH(i, n) y[i] = -expf(x[i]);
}
KERNEL void logsigmoid_fwd(long long n, const float *x, float *y) {
  FOR_EACH(i, n) {
    float v = x[i];
    y[i] = fminf(v, 0.f) - log1pf(expf(-fabsf(v)));
  }
}
/* σ(−x) = e^(−x)/(1 + e^(−x)) for x ≥ 0 (keeps the tiny values), 1/(1 + eˣ) below */
KERNEL void logsigmoid_bwd(long long n, int acc, const float *g, const float *x, float *gx) {
  FOR_EACH(i, n) {
    float v = x[i], e = expf(-fabsf(v));
    float s = v >= 0.f ? e / (1.f + e) : 1.f / (1.f + e);
    gx[i] = (acc ? gx[i] : 0.f) + g[i] * s;
  }
}
KERNEL void relu_fwd(long long n, const float *x, float *y) {
  FOR_EACH(i, n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
KERNEL void relu_bwd(long long n, int acc, const float *g, const float *y, float *gx) {
  FOR_EACH(i, n) gx[i] = (acc ? gx[i] : 0.f) + (y[i] > 0.f ? g[i] : 0.f);
}
KERNEL void softplus_bias_fwd(long long n, int cols, int clamped, float lo, float hi,
                              const float *raw, const float *bias, float *y) {
  FOR_EACH(i, n) {
    float s = softplusf_(raw[i] + bias[i % cols]);
    // (fminf/fmaxf would turn a NaN into the limit: a NaN must reach the step guard)
    y[i] = clamped && s == s ? fminf(fmaxf(s, lo), hi) : s;
  }
}
KERNEL void softplus_bias_bwd(long long n, int cols, int clamped, float lo, float hi,
                              const float *g, const float *raw, const float *bias, float *graw) {
  FOR_EACH(i, n) {
    float a = raw[i] + bias[i % cols];
    float s = softplusf_(a);
    graw[i] = !clamped || (s >= lo && s <= hi) ? g[i] * sigmoidf_(a) : 0.f;
  }
}
KERNEL void swiglu_fwd(long long n, const float *gate, const float *up, float *y) {
  FOR_EACH(i, n) y[i] = siluf_(gate[i]) * up[i];
}
KERNEL void swiglu_bwd(long long n, const float *g, const float *gate, const float *up,
                       float *ggate, float *gup) {
  FOR_EACH(i, n) {
    float x = gate[i];
    if (ggate) ggate[i] = g[i] * up[i] * dsiluf_(x);
    if (gup) gup[i] = g[i] * siluf_(x);
  }
}
KERNEL void copy_cols(long long rows, int w, const float *src, int ldSrc, int sOff, float *dst,
                      int ldDst, int dOff, int acc) {
  FOR_EACH(i, rows * w) {
    long long r = i / w;
    int j = (int)(i % w);
    float v = src[r * ldSrc + sOff + j];
    float *d = dst + r * ldDst + dOff + j;
    *d = acc ? *d + v : v;
  }
}
KERNEL void col_sum(long long rows, int cols, const float *x, float *y, int acc) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float s = 0.f;
  for (long long r = 0; r < rows; r++) s += x[r * cols + j];
  y[j] = acc ? y[j] + s : s;
}
