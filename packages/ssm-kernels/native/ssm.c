/*
 * Native kernels of @loop/ssm-kernels (causal conv1d, gated RMSNorm, softplusBias, addDSkip),
 * compiled from source on the user's machine by src/node/index.ts through @loop/tensor/node
 * `buildNativeAddon`; never downloaded, never required. Each function is the C twin of the
 * portable raw-array kernel named beside it and is tested against it
 * (src/node/native-ssm.test.ts).
 *
 * Conventions. Every kernel takes plain numbers and Float32Arrays; outputs are allocated by the
 * JavaScript caller and passed in (null where not wanted); every output element is written
 * (outputs need not be zeroed). Arrays are checked for type and length, so a wrong call throws
 * instead of reading past an array. Rows are independent and run on `n_threads` OpenMP threads
 * above PAR_MIN elements of work. Reductions over rows (weight / bias gradients) never depend on
 * the thread count: rows are cut into blocks of a fixed size, each block is summed in double on
 * one thread, and the block partials are added in block order — the same bits for any number
 * of threads. Floating-point sums inside a row use `omp simd reduction` so they vectorise.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fast-math.h"
#include "addon-threads.h"
#include "napi-args.h"
#include "row-blocks.h"
#include "thread-buffer.h"

/* elementwise / row loops run on all threads above this many elements of work */
#define PAR_MIN 32768
/* ---------------------------------------------------------------------------------------------
 * Argument checking
 * ------------------------------------------------------------------------------------------- */

/* Non-negative integer argument (sizes); throws on a negative or non-integer value. */
static long arg_size(loop_args *a, size_t i, const char *fn, const char *what, int *bad) {
  if (*bad) return 0;
  double d = loop_num(a, i);
  if (!(d >= 0) || d != (double)(long)d) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %s must be a non-negative integer", fn, what);
    napi_throw_range_error(a->env, NULL, msg);
    *bad = 1;
    return 0;
  }
  return (long)d;
}

/* ---------------------------------------------------------------------------------------------
 * Double-precision helpers for softplus / σ (vectorisable: no libm call, no data-dependent
 * branch)
 * ------------------------------------------------------------------------------------------- */

/*
 * e^x for x ≤ 0 in double: x = n·ln2 + r, |r| ≤ ln2/2, e^x = 2ⁿ·p(r), p the degree-10 Taylor
 * polynomial (relative error < 1e-13). n is taken from the bits of x·log2e + 1.5·2⁵² (round to
 * nearest), 2ⁿ built from n + 1023 shifted into the exponent. x < −700 gives 0 (as fastExp).
 */
static inline double exp_neg_d(double x) {
  const double lo = -700.0, shifter = 6755399441055744.0; /* 1.5·2⁵² */
  double c = x < lo ? lo : x;
  double t = c * 1.4426950408889634 + shifter;
  double n = t - shifter;
  double r = c - n * 6.93147180369123816490e-01; /* ln2 = hi + lo (fdlibm): n·hi is exact */
  r = r - n * 1.90821492927058770002e-10;
  double p =
      1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 +
      r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 +
      r * (1.0 / 3628800))))))))));
  uint64_t bits;
  memcpy(&bits, &t, 8);
  bits = (bits + 1023) << 52; /* low bits of t hold n (two's complement); ≡ (n + 1023) << 52 */
  double s;
  memcpy(&s, &bits, 8);
  return x < lo ? 0.0 : p * s;
}

/* σ(x) = 1/(1 + e^{−x}) in double: 1/(1+e) for x ≥ 0, e/(1+e) below, e = e^{−|x|} */
static inline double sigmoid_d(double x) {
  const double e = exp_neg_d(x < 0 ? x : -x);
  return (x >= 0 ? 1.0 : e) / (1.0 + e);
}

/*
 * log1p(u) for u ∈ [0, 1], in double: with s = u / (2 + u) ∈ [0, 1/3] (no cancellation: this is
 * (w − 1)/(w + 1) for w = 1 + u without forming w), log1p(u) = 2·atanh(s)
 * = 2s·(1 + s²/3 + s⁴/5 + … + s¹⁸/19); the first omitted term is below s²⁰/21 < 2e-11 relative,
 * far under float32 rounding.
 */
static inline double log1p_unit(double u) {
  double s = u / (2.0 + u);
  double z = s * s;
  double q = 1.0 + z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 +
             z * (1.0 / 13 + z * (1.0 / 15 + z * (1.0 / 17 + z * (1.0 / 19)))))))));
  return 2.0 * s * q;
}

/* ---------------------------------------------------------------------------------------------
 * Causal depthwise conv1d (src/causal-conv1d.ts)
 * ------------------------------------------------------------------------------------------- */

/* The sizes B, T, C, K of a conv kernel (arguments 0–3; K ≥ 1): 0, with the error thrown,
 * when one is invalid. */
static int arg_conv_sizes(loop_args *a, const char *fn, long *B, long *T, long *C, long *K) {
  int bad = 0;
  *B = arg_size(a, 0, fn, "B", &bad), *T = arg_size(a, 1, fn, "T", &bad);
  *C = arg_size(a, 2, fn, "C", &bad), *K = arg_size(a, 3, fn, "K", &bad);
  if (!bad && *K < 1) {
    char msg[80];
    snprintf(msg, sizeof msg, "%s: K must be ≥ 1", fn);
    napi_throw_range_error(a->env, NULL, msg);
    return 0;
  }
  return !bad;
}

/* x [B,T,C], weight [C,K], bias [C] | null and init [B,C,K−1] | null (arguments 4–7 of convFwd
 * and of the fused conv + silu kernels) */
static void arg_conv_inputs(loop_args *a, const char *fn, long B, long T, long C, long K,
                            const float **x, const float **w, const float **bias,
                            const float **init, int *bad) {
  *x = loop_arg_f32(a, 4, B * T * C, 0, fn, "x", bad);
  *w = loop_arg_f32(a, 5, C * K, 0, fn, "weight", bad);
  *bias = loop_arg_f32(a, 6, C, 1, fn, "bias", bad);
  *init = loop_arg_f32(a, 7, B * C * (K - 1), 1, fn, "init", bad);
}

/* weight [C,K] → [K,C] (channel innermost); caller frees */
static float *transpose_weight(const float *w, long C, long K) {
  float *wt = malloc((size_t)(K * C > 0 ? K * C : 1) * sizeof(float));
  if (!wt) return NULL;
  for (long c = 0; c < C; c++)
    for (long k = 0; k < K; k++) wt[k * C + c] = w[c * K + k];
  return wt;
}

/* Packed documents (causalConv1d's resets, packages/tensor/src/packed-documents.ts): rs [B·T]
 * (NULL: none) is non-zero where a document starts. Row (b, t) reads only inputs of its own document: taps τ ≥ the
 * returned first tap, the largest document start s in (t − K + 1, t], else t − K + 1 (every tap,
 * the initial state included when no start lies in [0, t]). */
static inline long conv_first_tap(const float *rs, long b, long t, long T, long K) {
  if (rs) {
    const long lo = t - K + 2 > 0 ? t - K + 2 : 0;
    for (long s = t; s >= lo; s--)
      if (rs[b * T + s] != 0.0f) return s;
  }
  return t - K + 1;
}

/* one output row (b, t) of convFwd into o [C]: bias, then the K taps in order k = 0..K−1
 * (wt: the weight transposed to [K,C]; taps before the row's document start skipped) */
static inline void conv_row(float *restrict o, long b, long t, long T, long C, long K,
                            const float *x, const float *wt, const float *bias,
                            const float *init, const float *rs) {
  const long K1 = K - 1, first = conv_first_tap(rs, b, t, T, K);
  if (bias)
    for (long c = 0; c < C; c++) o[c] = bias[c];
  else
    for (long c = 0; c < C; c++) o[c] = 0.0f;
  for (long k = 0; k < K; k++) {
    const long tau = t - K1 + k;
    const float *restrict wk = wt + k * C;
    if (tau < first) continue;
    if (tau >= 0) {
      const float *restrict xr = x + (b * T + tau) * C;
      for (long c = 0; c < C; c++) o[c] += wk[c] * xr[c];
    } else if (init) {
      const float *restrict ir = init + b * C * K1 + K1 + tau;
      for (long c = 0; c < C; c++) o[c] += wk[c] * ir[c * K1];
    }
  }
}

/*
 * convFwd(B, T, C, K, x, weight, bias|null, init|null, y[, resets|null]) — causalConv1dForward,
 * docs/model.md §3.2 (resets: packed documents, conv_first_tap):
 *   y[b,t,c] = bias[c] + Σ_{k=0..K−1} w[c,k] · in[b, t−K+1+k, c],
 *   in[b,τ,c] = x[b,τ,c] for τ ≥ 0, init[b, c, K−1+τ] for τ < 0 (0 without init).
 * Shapes: x [B,T,C], weight [C,K] (= [C,1,K]), bias [C], init [B,C,K−1] → y [B,T,C].
 * The k terms are added in order k = 0..K−1 onto bias (as the portable loop). Rows (b,t) are
 * independent and split across threads.
 */
static napi_value ConvFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "convFwd";
  if (!loop_get_args_opt(env, info, &a, 10, 1, fn)) return NULL;
  long B, T, C, K;
  if (!arg_conv_sizes(&a, fn, &B, &T, &C, &K)) return NULL;
  int bad = 0;
  long rows = B * T, n = rows * C;
  const float *x, *w, *bias, *init;
  arg_conv_inputs(&a, fn, B, T, C, K, &x, &w, &bias, &init, &bad);
  float *y = loop_arg_f32(&a, 8, n, 0, fn, "y", &bad);
  const float *rs = loop_arg_f32(&a, 9, rows, 1, fn, "resets", &bad);
  if (bad || n == 0) return NULL;
  float *wt = transpose_weight(w, C, K);
  if (!wt) {
    napi_throw_error(env, NULL, "convFwd: out of memory");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (n * K >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++)
    conv_row(y + r * C, r / T, r % T, T, C, K, x, wt, bias, init, rs);
  free(wt);
  return NULL;
}

/* gx row (b, t) of convBwd into o [C]: Σ_k w[c,k]·gy[b, t+K−1−k, c] over t+K−1−k < T, added
 * for k = K−1..0 (the portable scatter's order); gy row ρ is at gy + (ρ − g0)·C */
static inline void conv_gx_row(float *restrict o, long b, long t, long T, long C, long K,
                               const float *wt, const float *gy, long g0, const float *rs) {
  const long K1 = K - 1;
  for (long c = 0; c < C; c++) o[c] = 0.0f;
  for (long k = K1; k >= 0; k--) {
    const long tt = t + K1 - k;
    if (tt >= T || t < conv_first_tap(rs, b, tt, T, K)) continue;
    const float *restrict wk = wt + k * C, *restrict gr = gy + (b * T + tt - g0) * C;
    for (long c = 0; c < C; c++) o[c] += wk[c] * gr[c];
  }
}

/* row (b, t)'s terms of the weight and bias gradients, g = its gy row, added in double into the
 * block partial pk: [K,C] weight terms, then [C] bias terms */
static inline void conv_gw_row(double *restrict pk, const float *restrict g, long b, long t,
                               long T, long C, long K, const float *x, const float *init,
                               int wantW, int wantB, const float *rs) {
  const long K1 = K - 1;
  if (wantB) {
    double *restrict pb = pk + K * C;
    for (long c = 0; c < C; c++) pb[c] += g[c];
  }
  if (!wantW) return;
  const long first = conv_first_tap(rs, b, t, T, K);
  for (long k = 0; k < K; k++) {
    const long tau = t - K1 + k;
    double *restrict pkk = pk + k * C;
    if (tau < first) continue;
    if (tau >= 0) {
      const float *restrict xr = x + (b * T + tau) * C;
      for (long c = 0; c < C; c++) pkk[c] += (double)g[c] * xr[c];
    } else if (init) {
      const float *restrict ir = init + b * C * K1 + K1 + tau;
      for (long c = 0; c < C; c++) pkk[c] += (double)g[c] * ir[c * K1];
    }
  }
}

/* the weight and bias gradients from convBwd's block partials ([K,C] weight terms, then [C]
 * bias terms per block, in double): blocks added in order, weight back to [C,K] */
static void conv_write_sums(double *part, long nblk, long C, long K, float *gw, float *gb) {
  loop_sum_blocks(part, nblk, (K + 1) * C);
  if (gw)
    for (long c = 0; c < C; c++)
      for (long k = 0; k < K; k++) gw[c * K + k] = (float)part[k * C + c];
  if (gb)
    for (long c = 0; c < C; c++) gb[c] = (float)part[K * C + c];
}

/* the sums of a conv backward over no rows: zeros */
static void conv_zero_sums(float *gw, float *gb, float *gi, long B, long C, long K) {
  if (gw) memset(gw, 0, (size_t)(C * K) * sizeof(float));
  if (gb) memset(gb, 0, (size_t)C * sizeof(float));
  if (gi) memset(gi, 0, (size_t)(B * C * (K - 1)) * sizeof(float));
}

/* ginit of batch b (convBwd): ginit[b,c,j] = Σ_k w[c,k]·gy[b, j−k, c] (k = j..0, j−k < T); zero
 * without init (ginit is the gradient of init); gy row ρ at gy + (ρ − g0)·C; acc: C floats */
static void conv_ginit_batch(float *gi, float *restrict acc, long b, long T, long C, long K,
                             const float *wt, const float *init, const float *gy, long g0,
                             const float *rs) {
  const long K1 = K - 1;
  for (long j = 0; j < K1; j++) {
    for (long c = 0; c < C; c++) acc[c] = 0.0f;
    if (init)
      for (long k = j; k >= 0 && j - k < T; k--) {
        if (j - K1 < conv_first_tap(rs, b, j - k, T, K)) continue; /* (τ = j − K + 1 < 0) */
        const float *restrict wk = wt + k * C, *restrict gr = gy + (b * T + j - k - g0) * C;
        for (long c = 0; c < C; c++) acc[c] += wk[c] * gr[c];
      }
    for (long c = 0; c < C; c++) gi[b * C * K1 + c * K1 + j] = acc[c];
  }
}

/*
 * convBwd(B, T, C, K, x, weight, init|null, gy, gx|null, gw|null, gbias|null, ginit|null
 *         [, resets|null]) — (the terms of taps a document start cuts off left out) —
 * causalConv1dBackward, docs/model.md §3.2, for y as in convFwd:
 *   gx[b,τ,c]     = Σ_k w[c,k] · gy[b, τ+K−1−k, c]          (terms with τ+K−1−k < T)
 *   ginit[b,c,j]  = Σ_k w[c,k] · gy[b, j−k, c]               (j < K−1; terms with 0 ≤ j−k < T)
 *   gw[c,k]       = Σ_{b,t} gy[b,t,c] · in[b, t−K+1+k, c],   gbias[c] = Σ_{b,t} gy[b,t,c]
 * Shapes: x, gy, gx [B,T,C]; weight, gw [C,K]; gbias [C]; init, ginit [B,C,K−1]. ginit needs
 * init. Each gx row gathers its K terms in increasing t (the portable scatter's order); gx rows
 * run on all threads. gw / gbias: blocks of loop_block_rows(rows) rows of (b,t), each accumulated
 * in double, partials added in block order (independent of the thread count). ginit (K−1 rows
 * per batch) runs on one thread.
 */
static napi_value ConvBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "convBwd";
  if (!loop_get_args_opt(env, info, &a, 13, 1, fn)) return NULL;
  long B, T, C, K;
  if (!arg_conv_sizes(&a, fn, &B, &T, &C, &K)) return NULL;
  int bad = 0;
  const long K1 = K - 1, rows = B * T, n = rows * C;
  const float *x = loop_arg_f32(&a, 4, n, 0, fn, "x", &bad);
  const float *w = loop_arg_f32(&a, 5, C * K, 0, fn, "weight", &bad);
  const float *init = loop_arg_f32(&a, 6, B * C * K1, 1, fn, "init", &bad);
  const float *gy = loop_arg_f32(&a, 7, n, 0, fn, "gy", &bad);
  float *gx = loop_arg_f32(&a, 8, n, 1, fn, "gx", &bad);
  float *gw = loop_arg_f32(&a, 9, C * K, 1, fn, "gw", &bad);
  float *gb = loop_arg_f32(&a, 10, C, 1, fn, "gbias", &bad);
  float *gi = loop_arg_f32(&a, 11, B * C * K1, 1, fn, "ginit", &bad);
  const float *rs = loop_arg_f32(&a, 12, rows, 1, fn, "resets", &bad);
  if (bad) return NULL;
  if (n == 0) { /* no rows: the sums are empty */
    conv_zero_sums(gw, gb, gi, B, C, K);
    return NULL;
  }
  float *wt = transpose_weight(w, C, K);
  const long rb = loop_block_rows(rows), nblk = (rows + rb - 1) / rb, pw = (K + 1) * C;
  LOOP_KEPT(conv_part); /* (the block partials: 1.6 MB for 4096 rows of 640 channels) */
  double *part = (gw || gb) ? loop_keep(&conv_part, &conv_part_cap,
                                        (size_t)(nblk * pw) * sizeof(double))
                            : NULL;
  float *acc = gi ? malloc((size_t)C * sizeof(float)) : NULL;
  if (!wt || ((gw || gb) && !part) || (gi && !acc)) {
    free(wt), free(acc);
    napi_throw_error(env, NULL, "convBwd: out of memory");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (n * K >= PAR_MIN) schedule(static)
  for (long blk = 0; blk < nblk; blk++) {
    const long r0 = blk * rb, r1 = r0 + rb < rows ? r0 + rb : rows;
    double *restrict pk = part ? part + blk * pw : NULL;
    if (pk) memset(pk, 0, (size_t)pw * sizeof(double));
    for (long r = r0; r < r1; r++) {
      if (gx) conv_gx_row(gx + r * C, r / T, r % T, T, C, K, wt, gy, 0, rs);
      if (pk)
        conv_gw_row(pk, gy + r * C, r / T, r % T, T, C, K, x, init, gw != NULL, gb != NULL, rs);
    }
  }
  if (part) conv_write_sums(part, nblk, C, K, gw, gb);
  if (gi)
    for (long b = 0; b < B; b++) conv_ginit_batch(gi, acc, b, T, C, K, wt, init, gy, 0, rs);
  free(wt), free(acc);
  return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Causal conv1d + silu + split, fused (src/conv-silu-split.ts)
 * ------------------------------------------------------------------------------------------- */

#define MAX_PIECES 4

/* Reads np (1..MAX_PIECES) and the widths from args i.. (np, w0..w3; they must sum to C); 0 and
 * a thrown error when invalid. */
static int arg_pieces(loop_args *a, size_t i, long C, const char *fn, long *w, int *bad) {
  long np = arg_size(a, i, fn, "the piece count", bad), sum = 0;
  for (int p = 0; p < MAX_PIECES; p++) w[p] = arg_size(a, i + 1 + p, fn, "a piece width", bad);
  if (*bad) return 0;
  for (int p = 0; p < np && p < MAX_PIECES; p++) sum += w[p];
  if (np < 1 || np > MAX_PIECES || sum != C) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: 1 to %d pieces whose widths sum to C = %ld", fn, MAX_PIECES, C);
    napi_throw_range_error(a->env, NULL, msg);
    *bad = 1;
    return 0;
  }
  return (int)np;
}

/*
 * convSiluFwd(B, T, C, K, x, weight, bias|null, init|null, np, w0, w1, w2, w3, y0, y1, y2, y3
 *             [, resets|null])
 * — docs/model.md §3.2–3.3, silu(causal_conv1d(x)) split along channels into np pieces:
 *   pre = convFwd(x) (the same arithmetic, row by row), y_p[b,t,j] = silu(pre[b,t,o_p + j]),
 *   o_p = Σ_{q<p} w_q. Shapes as convFwd; y_p [B,T,w_p] (unused pieces null). pre is never stored:
 *   the backward recomputes it.
 */
static napi_value ConvSiluFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "convSiluFwd";
  if (!loop_get_args_opt(env, info, &a, 18, 1, fn)) return NULL;
  long B, T, C, K;
  if (!arg_conv_sizes(&a, fn, &B, &T, &C, &K)) return NULL;
  int bad = 0;
  long w[MAX_PIECES];
  int np = arg_pieces(&a, 8, C, fn, w, &bad);
  long rows = B * T, n = rows * C;
  const float *x, *wgt, *bias, *init;
  arg_conv_inputs(&a, fn, B, T, C, K, &x, &wgt, &bias, &init, &bad);
  float *y[MAX_PIECES];
  for (int p = 0; p < np; p++) y[p] = loop_arg_f32(&a, 13 + p, rows * w[p], 0, fn, "a piece", &bad);
  const float *rs = loop_arg_f32(&a, 17, rows, 1, fn, "resets", &bad);
  if (bad || n == 0) return NULL;
  float *wt = transpose_weight(wgt, C, K);
  int nt = n * K >= PAR_MIN ? n_threads : 1;
  LOOP_KEPT(cs_rows);
  float *buf = loop_keep(&cs_rows, &cs_rows_cap, (size_t)(nt * C) * sizeof(float));
  if (!wt || !buf) {
    free(wt);
    napi_throw_error(env, NULL, "convSiluFwd: out of memory");
    return NULL;
  }
#pragma omp parallel num_threads(nt)
  {
    float *restrict pre = buf + omp_get_thread_num() * C;
#pragma omp for schedule(static)
    for (long r = 0; r < rows; r++) {
      conv_row(pre, r / T, r % T, T, C, K, x, wt, bias, init, rs);
      long off = 0;
      for (int p = 0; p < np; off += w[p], p++) {
        const float *restrict v = pre + off;
        float *restrict yr = y[p] + r * w[p];
#pragma omp simd
        for (long j = 0; j < w[p]; j++) yr[j] = v[j] * loop_sigmoid(v[j]);
      }
    }
  }
  free(wt);
  return NULL;
}

/* rows [lo, hi) of ∂pre into d (row ρ at d + (ρ − lo)·C): pre recomputed (conv_row), then
 * ∂pre = g_p·σ·(1 + pre·(1 − σ)), σ = σ(pre), piece by piece (0 for a piece without gradient) */
static void conv_silu_dpre(float *restrict d, long lo, long hi, long T, long C, long K,
                           const float *x, const float *wt, const float *bias, const float *init,
                           int np, const long *w, float *const *g, const float *rs) {
  for (long r = lo; r < hi; r++) {
    float *restrict dr = d + (r - lo) * C;
    conv_row(dr, r / T, r % T, T, C, K, x, wt, bias, init, rs);
    long off = 0;
    for (int p = 0; p < np; off += w[p], p++) {
      float *restrict v = dr + off;
      if (!g[p]) {
        memset(v, 0, (size_t)w[p] * sizeof(float));
        continue;
      }
      const float *restrict gr = g[p] + r * w[p];
#pragma omp simd
      for (long j = 0; j < w[p]; j++) {
        float u = v[j], sg = loop_sigmoid(u);
        v[j] = gr[j] * sg * (1.0f + u * (1.0f - sg));
      }
    }
  }
}

/*
 * convSiluBwd(B, T, C, K, x, weight, bias|null, init|null, np, w0..w3, g0..g3 (null: no
 * gradient), gx|null, gw|null, gbias|null, ginit|null[, resets|null]) — the backward of
 * convSiluFwd: ∂pre
 * (conv_silu_dpre), then convBwd's sums on it (the same helpers and order, so the results are
 * those of convBwd on the stored ∂pre). One pass: a block of rows [r0, r1) recomputes ∂pre for
 * [r0, r1 + K − 1) into per-thread scratch (the K − 1 halo rows are what gx reads ahead), so
 * neither pre nor ∂pre ever goes to memory. Blocks as convBwd (weight and bias sums in double
 * per block, added in block order: independent of the thread count).
 */
static napi_value ConvSiluBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "convSiluBwd";
  if (!loop_get_args_opt(env, info, &a, 22, 1, fn)) return NULL;
  long B, T, C, K;
  if (!arg_conv_sizes(&a, fn, &B, &T, &C, &K)) return NULL;
  int bad = 0;
  long w[MAX_PIECES];
  int np = arg_pieces(&a, 8, C, fn, w, &bad);
  const long K1 = K - 1, rows = B * T, n = rows * C;
  const float *x, *wgt, *bias, *init;
  arg_conv_inputs(&a, fn, B, T, C, K, &x, &wgt, &bias, &init, &bad);
  float *g[MAX_PIECES];
  for (int p = 0; p < np; p++) g[p] = loop_arg_f32(&a, 13 + p, rows * w[p], 1, fn, "a piece gradient", &bad);
  float *gx = loop_arg_f32(&a, 17, n, 1, fn, "gx", &bad);
  float *gw = loop_arg_f32(&a, 18, C * K, 1, fn, "gw", &bad);
  float *gb = loop_arg_f32(&a, 19, C, 1, fn, "gbias", &bad);
  float *gi = loop_arg_f32(&a, 20, B * C * K1, 1, fn, "ginit", &bad);
  const float *rs = loop_arg_f32(&a, 21, rows, 1, fn, "resets", &bad);
  if (bad) return NULL;
  if (n == 0) { /* no rows: the sums are empty */
    conv_zero_sums(gw, gb, gi, B, C, K);
    return NULL;
  }
  float *wt = transpose_weight(wgt, C, K);
  const long rb = loop_block_rows(rows), nblk = (rows + rb - 1) / rb, pw = (K + 1) * C;
  int nt = n * K >= PAR_MIN ? n_threads : 1;
  LOOP_KEPT(cs_part);
  LOOP_KEPT(cs_dpre);
  double *part = (gw || gb) ? loop_keep(&cs_part, &cs_part_cap, (size_t)(nblk * pw) * sizeof(double))
                            : NULL;
  /* per thread: ∂pre of a block and its halo; then (ginit) K − 1 rows and an accumulator */
  const long per = ((rb + K1) * C + 15) / 16 * 16;
  float *dpre = loop_keep(&cs_dpre, &cs_dpre_cap, (size_t)(nt * per + K1 * C + C) * sizeof(float));
  if (!wt || ((gw || gb) && !part) || !dpre) {
    free(wt);
    napi_throw_error(env, NULL, "convSiluBwd: out of memory");
    return NULL;
  }
#pragma omp parallel num_threads(nt)
  {
    float *restrict d = dpre + omp_get_thread_num() * per;
#pragma omp for schedule(static)
    for (long blk = 0; blk < nblk; blk++) {
      const long r0 = blk * rb, r1 = r0 + rb < rows ? r0 + rb : rows;
      const long hi = r1 + K1 < rows ? r1 + K1 : rows;
      conv_silu_dpre(d, r0, gx ? hi : r1, T, C, K, x, wt, bias, init, np, w, g, rs);
      double *restrict pk = part ? part + blk * pw : NULL;
      if (pk) memset(pk, 0, (size_t)pw * sizeof(double));
      for (long r = r0; r < r1; r++) {
        if (gx) conv_gx_row(gx + r * C, r / T, r % T, T, C, K, wt, d, r0, rs);
        if (pk)
          conv_gw_row(pk, d + (r - r0) * C, r / T, r % T, T, C, K, x, init, gw != NULL,
                      gb != NULL, rs);
      }
    }
  }
  if (part) conv_write_sums(part, nblk, C, K, gw, gb);
  if (gi) { /* ∂pre of each batch's first K − 1 rows once more, then convBwd's ginit sums */
    float *d = dpre + nt * per, *acc = d + K1 * C;
    for (long b = 0; b < B; b++) {
      const long lo = b * T, hi = lo + (K1 < T ? K1 : T);
      conv_silu_dpre(d, lo, hi, T, C, K, x, wt, bias, init, np, w, g, rs);
      conv_ginit_batch(gi, acc, b, T, C, K, wt, init, d, lo, rs);
    }
  }
  free(wt);
  return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Gated grouped RMSNorm (src/gated-rmsnorm.ts)
 * ------------------------------------------------------------------------------------------- */

/*
 * rmsnormFwd(x, z, weight, rows, Di, G, eps, rinv|null, y) — gatedRmsnormForward, docs/model.md §3.6:
 *   v = x ⊙ silu(z);  per row and group g of gs = Di/G channels: r = 1/sqrt(mean(v_g²) + eps);
 *   y = v · r ⊙ weight;  rinv[row, g] = r.
 * Shapes: x, z, y [rows, Di]; weight [Di]; rinv [rows, G]; G divides Di. Σv² and r in double;
 * rows split across threads.
 */
static napi_value RmsnormFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "rmsnormFwd";
  if (!loop_get_args(env, info, &a, 9, fn)) return NULL;
  int bad = 0;
  long rows = arg_size(&a, 3, fn, "rows", &bad), Di = arg_size(&a, 4, fn, "Di", &bad);
  long G = arg_size(&a, 5, fn, "G", &bad);
  if (!bad && (G < 1 || Di % G != 0)) {
    napi_throw_range_error(env, NULL, "rmsnormFwd: G must be a positive divisor of Di");
    return NULL;
  }
  const long n = rows * Di;
  const float *x = loop_arg_f32(&a, 0, n, 0, fn, "x", &bad);
  const float *z = loop_arg_f32(&a, 1, n, 0, fn, "z", &bad);
  const float *w = loop_arg_f32(&a, 2, Di, 0, fn, "weight", &bad);
  const double eps = loop_num(&a, 6);
  float *rinv = loop_arg_f32(&a, 7, rows * G, 1, fn, "rinv", &bad);
  float *y = loop_arg_f32(&a, 8, n, 0, fn, "y", &bad);
  if (bad || n == 0) return NULL;
  const long gs = Di / G;
#pragma omp parallel for num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++) {
    for (long g = 0; g < G; g++) {
      const long o = r * Di + g * gs;
      const float *restrict xr = x + o, *restrict zr = z + o, *restrict wg = w + g * gs;
      float *restrict yr = y + o;
      double ss = 0;
#pragma omp simd reduction(+ : ss)
      for (long j = 0; j < gs; j++) {
        const float zv = zr[j];
        const float v = xr[j] * zv * loop_sigmoid(zv);
        yr[j] = v;
        ss += (double)v * v;
      }
      const double ri = 1.0 / sqrt(ss / (double)gs + eps);
      if (rinv) rinv[r * G + g] = (float)ri;
      for (long j = 0; j < gs; j++) yr[j] = (float)((double)yr[j] * ri * wg[j]);
    }
  }
  return NULL;
}

/* groups of at least this many channels take σ in float32 (see rmsnormBwd) */
#define SIGMOID_F32_MIN_GROUP 16

/*
 * rmsnormBwd(x, z, weight, rows, Di, G, rinv, gy, gx|null, gz|null, gw|null) —
 * gatedRmsnormBackward, docs/model.md §3.6. With σ = σ(z), v̂ = x·z·σ·r (r = rinv of the row/group),
 * ĝ = gy ⊙ weight, per row and group of gs = Di/G channels:
 *   ∂v = r·(ĝ − v̂·mean(ĝ ⊙ v̂)),  gx = ∂v ⊙ z·σ,  gz = ∂v ⊙ x·σ·(1 + z(1 − σ)),
 *   gw = Σ_rows gy ⊙ v̂.
 * Shapes: x, z, gy, gx, gz [rows, Di]; weight, gw [Di]; rinv [rows, G]. Computed in double,
 * rounded once: ĝ − v̂·mean(ĝ ⊙ v̂) cancels when a group's channels are few (one channel:
 * v̂ = ±1 up to eps), and float32 terms would leave only their rounding error. σ is the one
 * exception in groups of SIGMOID_F32_MIN_GROUP channels or more: there the float32 σ (the
 * forward's own) errs no more than the float32 rinv beside it, at a quarter of the cost.
 * gx / gz rows run on all threads; gw: blocks of loop_block_rows(rows) rows summed in double,
 * partials added in block order (independent of the thread count).
 */
static napi_value RmsnormBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "rmsnormBwd";
  if (!loop_get_args(env, info, &a, 11, fn)) return NULL;
  int bad = 0;
  long rows = arg_size(&a, 3, fn, "rows", &bad), Di = arg_size(&a, 4, fn, "Di", &bad);
  long G = arg_size(&a, 5, fn, "G", &bad);
  if (!bad && (G < 1 || Di % G != 0)) {
    napi_throw_range_error(env, NULL, "rmsnormBwd: G must be a positive divisor of Di");
    return NULL;
  }
  const long n = rows * Di;
  const float *x = loop_arg_f32(&a, 0, n, 0, fn, "x", &bad);
  const float *z = loop_arg_f32(&a, 1, n, 0, fn, "z", &bad);
  const float *w = loop_arg_f32(&a, 2, Di, 0, fn, "weight", &bad);
  const float *rinv = loop_arg_f32(&a, 6, rows * G, 0, fn, "rinv", &bad);
  const float *gy = loop_arg_f32(&a, 7, n, 0, fn, "gy", &bad);
  float *gx = loop_arg_f32(&a, 8, n, 1, fn, "gx", &bad);
  float *gz = loop_arg_f32(&a, 9, n, 1, fn, "gz", &bad);
  float *gw = loop_arg_f32(&a, 10, Di, 1, fn, "gw", &bad);
  if (bad) return NULL;
  if (n == 0) {
    if (gw) memset(gw, 0, (size_t)Di * sizeof(float));
    return NULL;
  }
  const long gs = Di / G, rb = loop_block_rows(rows), nblk = (rows + rb - 1) / rb;
  LOOP_KEPT(norm_part);
  double *part = gw ? loop_keep(&norm_part, &norm_part_cap, (size_t)(nblk * Di) * sizeof(double))
                    : NULL;
  if (gw && !part) {
    napi_throw_error(env, NULL, "rmsnormBwd: out of memory");
    return NULL;
  }
  int oom = 0;
#pragma omp parallel num_threads(n_threads) if (n >= PAR_MIN)
  {
    double *sg = malloc((size_t)(2 * gs) * sizeof(double)); /* σ(z) and v̂ of one group */
    if (!sg) {
#pragma omp atomic write
      oom = 1;
    }
    double *vh = sg ? sg + gs : NULL;
#pragma omp for schedule(static)
    for (long blk = 0; blk < nblk; blk++) {
      if (!sg) continue;
      const long r0 = blk * rb, r1 = r0 + rb < rows ? r0 + rb : rows;
      double *restrict pk = part ? part + blk * Di : NULL;
      if (pk) memset(pk, 0, (size_t)Di * sizeof(double));
      for (long r = r0; r < r1; r++) {
        for (long g = 0; g < G; g++) {
          const long o = r * Di + g * gs;
          const float *restrict xr = x + o, *restrict zr = z + o, *restrict gr = gy + o;
          const float *restrict wg = w + g * gs;
          const double ri = rinv[r * G + g];
          double *restrict S = sg, *restrict V = vh;
          double dot = 0;
          /* σ in float32 is as close as the float32 rinv it multiplies, except where the
           * cancellation below is severe (a few channels per group): there in double */
          if (gs < SIGMOID_F32_MIN_GROUP) {
            for (long j = 0; j < gs; j++) S[j] = sigmoid_d(zr[j]);
          } else {
#pragma omp simd
            for (long j = 0; j < gs; j++) S[j] = loop_sigmoid(zr[j]);
          }
#pragma omp simd reduction(+ : dot)
          for (long j = 0; j < gs; j++) {
            const double zv = zr[j], sj = S[j];
            const double v = (double)xr[j] * zv * sj * ri;
            V[j] = v;
            dot += (double)gr[j] * wg[j] * v;
          }
          if (pk) {
            double *restrict pg = pk + g * gs;
            for (long j = 0; j < gs; j++) pg[j] += (double)gr[j] * V[j];
          }
          const double m = dot / (double)gs;
          if (gx && gz) {
            float *restrict ox = gx + o, *restrict oz = gz + o;
            for (long j = 0; j < gs; j++) {
              const double gv = ri * ((double)gr[j] * wg[j] - V[j] * m), zv = zr[j], sj = S[j];
              const double gvs = gv * sj;
              ox[j] = (float)(gvs * zv);
              oz[j] = (float)(gvs * xr[j] * (1.0 + zv * (1.0 - sj)));
            }
          } else if (gx) {
            float *restrict ox = gx + o;
            for (long j = 0; j < gs; j++) {
              const double gv = ri * ((double)gr[j] * wg[j] - V[j] * m);
              ox[j] = (float)(gv * zr[j] * S[j]);
            }
          } else if (gz) {
            float *restrict oz = gz + o;
            for (long j = 0; j < gs; j++) {
              const double gv = ri * ((double)gr[j] * wg[j] - V[j] * m), zv = zr[j], sj = S[j];
              oz[j] = (float)(gv * xr[j] * sj * (1.0 + zv * (1.0 - sj)));
            }
          }
        }
      }
    }
    free(sg);
  }
  if (oom) {
    napi_throw_error(env, NULL, "rmsnormBwd: out of memory");
    return NULL;
  }
  if (part) {
    loop_sum_blocks_f32(gw, part, nblk, Di);
  }
  return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * softplusBias and addDSkip (src/mamba2-ops.ts)
 * ------------------------------------------------------------------------------------------- */

/*
 * softplusFwd(raw, bias, y, rows, H, lo, hi) — softplusBias forward, docs/model.md §3.4 step 4:
 *   y[r,h] = clamp(softplus(v), lo, hi),  softplus(v) = max(v, 0) + log1p(e^{−|v|}),
 *   v = raw[r,h] + bias[h]
 * Shapes: raw, y [rows, H]; bias [H]. v and the softplus in double (v exact), rounded once, then
 * clamped in float32 (lo, hi: the time_step_limit as float32; 0, ∞ change nothing).
 */
static napi_value SoftplusFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "softplusFwd";
  if (!loop_get_args(env, info, &a, 7, fn)) return NULL;
  int bad = 0;
  long rows = arg_size(&a, 3, fn, "rows", &bad), H = arg_size(&a, 4, fn, "H", &bad);
  const float lo = (float)loop_num(&a, 5), hi = (float)loop_num(&a, 6);
  const long n = rows * H;
  const float *raw = loop_arg_f32(&a, 0, n, 0, fn, "raw", &bad);
  const float *bias = loop_arg_f32(&a, 1, H, 0, fn, "bias", &bad);
  float *y = loop_arg_f32(&a, 2, n, 0, fn, "y", &bad);
  if (bad || n == 0) return NULL;
#pragma omp parallel for num_threads(n_threads) if (n >= PAR_MIN / 2) schedule(static)
  for (long r = 0; r < rows; r++) {
    const float *restrict rr = raw + r * H;
    float *restrict yr = y + r * H;
#pragma omp simd
    for (long h = 0; h < H; h++) {
      const double v = (double)rr[h] + (double)bias[h];
      const double av = v < 0 ? -v : v;
      const float sp = (float)((v > 0 ? v : 0.0) + log1p_unit(exp_neg_d(-av)));
      yr[h] = sp < lo ? lo : (sp > hi ? hi : sp);
    }
  }
  return NULL;
}

/* g · σ(raw + bias) in double (raw + bias exact); 0 where softplus(raw + bias), rounded to
 * float32, lies outside [lo, hi] (clamped: torch.clamp's gradient) */
static inline double softplus_grad(float raw, float bias, float g, int clamped, float lo,
                                   float hi) {
  const double v = (double)raw + (double)bias;
  if (clamped) {
    const double av = v < 0 ? -v : v;
    const float sp = (float)((v > 0 ? v : 0.0) + log1p_unit(exp_neg_d(-av)));
    if (!(sp >= lo && sp <= hi)) return 0.0;
  }
  return (double)g * sigmoid_d(v);
}

/*
 * softplusBwd(raw, bias, gy, graw|null, gbias|null, rows, H, lo, hi) — softplusBias backward:
 *   graw[r,h] = gy[r,h] · σ(raw[r,h] + bias[h]) · [lo ≤ softplus(raw[r,h] + bias[h]) ≤ hi],
 *   gbias[h] = Σ_r graw[r,h]
 * Shapes: raw, gy, graw [rows, H]; bias, gbias [H]. σ and graw in double (graw rounded once);
 * gbias sums the double graw in blocks of loop_block_rows(rows) rows, partials added in block order
 * (independent of the thread count).
 */
static napi_value SoftplusBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "softplusBwd";
  if (!loop_get_args(env, info, &a, 9, fn)) return NULL;
  int bad = 0;
  long rows = arg_size(&a, 5, fn, "rows", &bad), H = arg_size(&a, 6, fn, "H", &bad);
  const float lo = (float)loop_num(&a, 7), hi = (float)loop_num(&a, 8);
  const int clamped = lo > 0.0f || hi < INFINITY; /* a softplus is never below 0 */
  const long n = rows * H;
  const float *raw = loop_arg_f32(&a, 0, n, 0, fn, "raw", &bad);
  const float *bias = loop_arg_f32(&a, 1, H, 0, fn, "bias", &bad);
  const float *gy = loop_arg_f32(&a, 2, n, 0, fn, "gy", &bad);
  float *gr = loop_arg_f32(&a, 3, n, 1, fn, "graw", &bad);
  float *gb = loop_arg_f32(&a, 4, H, 1, fn, "gbias", &bad);
  if (bad) return NULL;
  if (n == 0) {
    if (gb) memset(gb, 0, (size_t)H * sizeof(float));
    return NULL;
  }
  const long rb = loop_block_rows(rows), nblk = (rows + rb - 1) / rb;
  double *part = gb ? malloc((size_t)(nblk * H) * sizeof(double)) : NULL;
  if (gb && !part) {
    napi_throw_error(env, NULL, "softplusBwd: out of memory");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (n >= PAR_MIN / 2) schedule(static)
  for (long blk = 0; blk < nblk; blk++) {
    const long r0 = blk * rb, r1 = r0 + rb < rows ? r0 + rb : rows;
    double *restrict pk = part ? part + blk * H : NULL;
    if (pk) memset(pk, 0, (size_t)H * sizeof(double));
    if (!pk && !gr) continue;
    for (long r = r0; r < r1; r++) {
      const float *restrict rr = raw + r * H, *restrict g = gy + r * H;
      float *restrict o = gr ? gr + r * H : NULL;
      if (o && pk) {
#pragma omp simd
        for (long h = 0; h < H; h++) {
          const double d = softplus_grad(rr[h], bias[h], g[h], clamped, lo, hi);
          o[h] = (float)d;
          pk[h] += d;
        }
      } else if (o) {
#pragma omp simd
        for (long h = 0; h < H; h++)
          o[h] = (float)softplus_grad(rr[h], bias[h], g[h], clamped, lo, hi);
      } else {
#pragma omp simd
        for (long h = 0; h < H; h++)
          pk[h] += softplus_grad(rr[h], bias[h], g[h], clamped, lo, hi);
      }
    }
  }
  if (part) {
    loop_sum_blocks_f32(gb, part, nblk, H);
    free(part);
  }
  return NULL;
}

/*
 * dskipFwd(y, x, D, out, rows, H, P) — addDSkip forward, docs/model.md §3.5 (the D·x term of y_t):
 *   out[r,h,p] = y[r,h,p] + D[h] · x[r,h,p]
 * Shapes: y, x, out [rows, H, P]; D [H]. Rows split across threads.
 */
static napi_value DskipFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "dskipFwd";
  if (!loop_get_args(env, info, &a, 7, fn)) return NULL;
  int bad = 0;
  long rows = arg_size(&a, 4, fn, "rows", &bad), H = arg_size(&a, 5, fn, "H", &bad);
  long P = arg_size(&a, 6, fn, "P", &bad);
  const long n = rows * H * P;
  const float *y = loop_arg_f32(&a, 0, n, 0, fn, "y", &bad);
  const float *x = loop_arg_f32(&a, 1, n, 0, fn, "x", &bad);
  const float *D = loop_arg_f32(&a, 2, H, 0, fn, "D", &bad);
  float *out = loop_arg_f32(&a, 3, n, 0, fn, "out", &bad);
  if (bad || n == 0) return NULL;
  const long HP = H * P;
#pragma omp parallel for num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++)
    for (long h = 0; h < H; h++) {
      const long o = r * HP + h * P;
      const float *restrict yr = y + o, *restrict xr = x + o;
      float *restrict orow = out + o;
      const float d = D[h];
      for (long p = 0; p < P; p++) orow[p] = yr[p] + d * xr[p];
    }
  return NULL;
}

/*
 * dskipBwd(x, D, gy, gx|null, gD|null, rows, H, P) — addDSkip backward:
 *   gx[r,h,p] = D[h] · gy[r,h,p],  gD[h] = Σ_{r,p} gy[r,h,p] · x[r,h,p]   (∂y = gy, not copied)
 * Shapes: x, gy, gx [rows, H, P]; D, gD [H]. gD: the Σ_p of each (r,h) in double, added over
 * blocks of loop_block_rows(rows) rows in double, partials added in block order (independent of the
 * thread count).
 */
static napi_value DskipBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "dskipBwd";
  if (!loop_get_args(env, info, &a, 8, fn)) return NULL;
  int bad = 0;
  long rows = arg_size(&a, 5, fn, "rows", &bad), H = arg_size(&a, 6, fn, "H", &bad);
  long P = arg_size(&a, 7, fn, "P", &bad);
  const long n = rows * H * P, HP = H * P;
  const float *x = loop_arg_f32(&a, 0, n, 0, fn, "x", &bad);
  const float *D = loop_arg_f32(&a, 1, H, 0, fn, "D", &bad);
  const float *gy = loop_arg_f32(&a, 2, n, 0, fn, "gy", &bad);
  float *gx = loop_arg_f32(&a, 3, n, 1, fn, "gx", &bad);
  float *gD = loop_arg_f32(&a, 4, H, 1, fn, "gD", &bad);
  if (bad) return NULL;
  if (n == 0) {
    if (gD) memset(gD, 0, (size_t)H * sizeof(float));
    return NULL;
  }
  const long rb = loop_block_rows(rows), nblk = (rows + rb - 1) / rb;
  double *part = gD ? malloc((size_t)(nblk * H) * sizeof(double)) : NULL;
  if (gD && !part) {
    napi_throw_error(env, NULL, "dskipBwd: out of memory");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
  for (long blk = 0; blk < nblk; blk++) {
    const long r0 = blk * rb, r1 = r0 + rb < rows ? r0 + rb : rows;
    double *restrict pk = part ? part + blk * H : NULL;
    if (pk) memset(pk, 0, (size_t)H * sizeof(double));
    for (long r = r0; r < r1; r++)
      for (long h = 0; h < H; h++) {
        const long o = r * HP + h * P;
        const float *restrict g = gy + o, *restrict xr = x + o;
        if (gx) {
          float *restrict ox = gx + o;
          const float d = D[h];
          for (long p = 0; p < P; p++) ox[p] = d * g[p];
        }
        if (pk) {
          double s = 0;
#pragma omp simd reduction(+ : s)
          for (long p = 0; p < P; p++) s += (double)g[p] * xr[p];
          pk[h] += s;
        }
      }
  }
  if (part) {
    loop_sum_blocks_f32(gD, part, nblk, H);
    free(part);
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "convFwd", ConvFwd);
  loop_export(env, exports, "convBwd", ConvBwd);
  loop_export(env, exports, "convSiluFwd", ConvSiluFwd);
  loop_export(env, exports, "convSiluBwd", ConvSiluBwd);
  loop_export(env, exports, "rmsnormFwd", RmsnormFwd);
  loop_export(env, exports, "rmsnormBwd", RmsnormBwd);
  loop_export(env, exports, "softplusFwd", SoftplusFwd);
  loop_export(env, exports, "softplusBwd", SoftplusBwd);
  loop_export(env, exports, "dskipFwd", DskipFwd);
  loop_export(env, exports, "dskipBwd", DskipBwd);
  loop_export(env, exports, "setThreads", loop_set_threads);
  return exports;
}
