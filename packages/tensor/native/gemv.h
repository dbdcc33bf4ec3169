/*
 * Matrix products with a few rows (included by the native addons, like sgemm.h):
 *   y[i, e] = alpha · Σ_k w[e, k]·x[i, k] + beta · y[i, e]   for rows e of w, i < n
 * (beta = 0: y is not read), w [·, K] with row stride ldw, x [n, K] with row stride ldx, y row
 * stride ldy. For n of 1 to a few rows — decoding's batch — against weights stored as rows
 * (a linear layer's [out, in]): dot products read straight from the rows, where the packing of
 * sgemm.h's tiled path costs more than such a product.
 *
 * Order of the sums: every dot product keeps 8 partial sums (index k mod 8, in increasing k,
 * multiply-adds fused), adds them in a fixed tree, then the K mod 8 tail in order — the same
 * for every output whatever n, the block an output falls in or the thread computing it, so
 * results are bitwise independent of all three. Eight lanes with AVX-512 too: the eight
 * accumulators of loop_dot4x2 and their operands fit AVX2's sixteen vector registers, 512-bit
 * ones measured no faster on Zen 4 (two 256-bit halves), and both builds then agree bit for bit.
 *
 * loop_v8 (GCC vector extension: a ymm register with AVX2 or AVX-512, scalar code elsewhere),
 * LOOP_LD8 / LOOP_ST8 (unaligned) and loop_lanes_sum serve kernels that keep such sums
 * themselves (native/mamba2-step.c of @loop/ssm-kernels).
 */
#ifndef LOOP_GEMV_H
#define LOOP_GEMV_H
#include <string.h>

#define LOOP_LANES 8
typedef float loop_v8 __attribute__((vector_size(LOOP_LANES * 4)));
typedef float loop_v8u __attribute__((vector_size(LOOP_LANES * 4), aligned(4), may_alias));
typedef float loop_v4 __attribute__((vector_size(16)));
#define LOOP_LD8(p) (*(const loop_v8u *)(p))
#define LOOP_ST8(p, v) (*(loop_v8u *)(p) = (v))

/* the 8 partial sums in a fixed tree: halves added pairwise (in vector registers: a loop over
 * lanes would go through memory) */
static inline float loop_lanes_sum(loop_v8 a) {
  loop_v4 lo, hi;
  memcpy(&lo, &a, 16);
  memcpy(&hi, (char *)&a + 16, 16);
  const loop_v4 s4 = lo + hi;
  return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

/* alpha · (the partial sums' total plus the products of the K mod 8 tail, in order) + beta·y */
static inline void loop_dot_put(float *y, loop_v8 acc, const float *restrict w,
                                const float *restrict x, long k0, long K, float alpha,
                                float beta) {
  float s = loop_lanes_sum(acc);
  for (long k = k0; k < K; k++) s += w[k] * x[k];
  *y = beta == 0.0f ? alpha * s : alpha * s + beta * *y;
}

/* the four rows j of w (row stride ldw) against x0 and x1: y0[j], y1[j] — eight independent
 * chains, enough to keep both FMA units busy */
static inline void loop_dot4x2(const float *restrict w, long ldw, long K, const float *restrict x0,
                               const float *restrict x1, float *y0, float *y1, float alpha,
                               float beta) {
  loop_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
  const long KL = K / LOOP_LANES * LOOP_LANES;
  for (long k = 0; k < KL; k += LOOP_LANES) {
    const loop_v8 u = LOOP_LD8(x0 + k), v = LOOP_LD8(x1 + k);
    const loop_v8 w0 = LOOP_LD8(w + k), w1 = LOOP_LD8(w + ldw + k);
    const loop_v8 w2 = LOOP_LD8(w + 2 * ldw + k), w3 = LOOP_LD8(w + 3 * ldw + k);
    a0 += w0 * u, a1 += w1 * u, a2 += w2 * u, a3 += w3 * u;
    b0 += w0 * v, b1 += w1 * v, b2 += w2 * v, b3 += w3 * v;
  }
  const loop_v8 a[4] = {a0, a1, a2, a3}, b[4] = {b0, b1, b2, b3};
  for (int j = 0; j < 4; j++) {
    loop_dot_put(y0 + j, a[j], w + j * ldw, x0, KL, K, alpha, beta);
    loop_dot_put(y1 + j, b[j], w + j * ldw, x1, KL, K, alpha, beta);
  }
}

/* the eight rows j of w against one x: y[j] (eight chains for a single row) */
static inline void loop_dot8(const float *restrict w, long ldw, long K, const float *restrict x,
                             float *y, float alpha, float beta) {
  loop_v8 a[8] = {{0}};
  const long KL = K / LOOP_LANES * LOOP_LANES;
  for (long k = 0; k < KL; k += LOOP_LANES) {
    const loop_v8 u = LOOP_LD8(x + k);
    for (int j = 0; j < 8; j++) a[j] += LOOP_LD8(w + j * ldw + k) * u;
  }
  for (int j = 0; j < 8; j++) loop_dot_put(y + j, a[j], w + j * ldw, x, KL, K, alpha, beta);
}

/* one row of w against one x */
static inline void loop_dot1(const float *restrict w, long K, const float *restrict x, float *y,
                             float alpha, float beta) {
  loop_v8 a = {0};
  const long KL = K / LOOP_LANES * LOOP_LANES;
  for (long k = 0; k < KL; k += LOOP_LANES) a += LOOP_LD8(w + k) * LOOP_LD8(x + k);
  loop_dot_put(y, a, w, x, KL, K, alpha, beta);
}

/* the header's product for rows e of [e0, e1) of w: blocks of eight rows of w (a block starts at
 * e0 + 8·b), each against every x row (two at a time) while it is in cache */
static void loop_gemv_rows(const float *w, long ldw, long K, long e0, long e1, const float *x,
                           long ldx, long n, float alpha, float beta, float *y, long ldy) {
  for (long e = e0; e < e1; e += 8) {
    const float *wb = w + e * ldw;
    if (e + 8 > e1) {
      for (long i = 0; i < n; i++)
        for (long r = e; r < e1; r++)
          loop_dot1(w + r * ldw, K, x + i * ldx, y + i * ldy + r, alpha, beta);
      continue;
    }
    long i = 0;
    for (; i + 2 <= n; i += 2) {
      float *y0 = y + i * ldy + e, *y1 = y0 + ldy;
      const float *x0 = x + i * ldx, *x1 = x0 + ldx;
      loop_dot4x2(wb, ldw, K, x0, x1, y0, y1, alpha, beta);
      loop_dot4x2(wb + 4 * ldw, ldw, K, x0, x1, y0 + 4, y1 + 4, alpha, beta);
    }
    if (i < n) loop_dot8(wb, ldw, K, x + i * ldx, y + i * ldy + e, alpha, beta);
  }
}

#endif
