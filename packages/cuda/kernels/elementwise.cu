/*
 * Elementwise kernels and their gradients, over flat arrays of n elements (grid-stride):
 *   add_bcast:  y[i] = a[i] + b[i mod nb]           (b broadcast over leading axes; nb = n: plain)
 *   axpy:       y[i] = y[i]·beta + alpha·x[i]        (gradient accumulation, scaling: x may be y)
 *   fill:       y[i] = v
 *   exp_fwd:    y = eˣ;            exp_bwd:   gx = g·y
 *   sigmoid_fwd: y = σ(x);         sigmoid_bwd: gx = g·y·(1 − y)
 *   negexp_fwd: y = −eˣ;           negexp_bwd: gx = g·y
 *   softplus_bias_fwd: y[r,j] = clamp(softplus(raw[r,j] + bias[j]), lo, hi) when `clamped` (dt's
 *               time_step_limit; NaN stays NaN), else the softplus alone;
 *               bwd: graw = g·σ(raw + bias) where the softplus lies within [lo, hi], else 0
 *   swiglu_fwd: y = silu(gate)·up; bwd: ggate = g·up·silu'(gate), gup = g·silu(gate)
 *   copy_cols:  dst[r, dOff + j] = (acc ? dst : 0) + src[r, sOff + j], j < w, r < rows
 *               (linearSplit's pieces forward, their gradients back into one array)
 *   col_sum:    y[j] = (acc ? y[j] : 0) + Σ_r x[r, j]  (bias and broadcast gradients; rows summed
 *               in order by one thread per column: deterministic)
 */
#include "common.cuh"

KERNEL void add_bcast(long long n, long long nb, const float *a, const float *b, float *y) {
  FOR_EACH(i, n) y[i] = a[i] + b[i % nb];
}
KERNEL void axpy(long long n, float alpha, const float *x, float beta, float *y) {
  FOR_EACH(i, n) y[i] = (beta == 0.f ? 0.f : beta * y[i]) + alpha * x[i];
}
KERNEL void fill(long long n, float v, float *y) {
  FOR_EACH(i, n) y[i] = v;
}
KERNEL void exp_fwd(long long n, const float *x, float *y) {
  FOR_EACH(i, n) y[i] = expf(x[i]);
}
/* gx (+)= g·y: the gradient of eˣ and of −eˣ alike (y holds the output) */
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
