/*
 * Native kernels of @loop/tensor, compiled from source on the user's machine by
 * src/node/native.ts (system C compiler, -O3 -march=native -fopenmp); never downloaded and never
 * required: without a compiler everything runs on the portable kernels.
 *
 * sgemm: C = alpha · op(A) · op(B) + beta · C (sgemm.h), the GemmFn contract of
 *   src/kernels/gemm.ts.
 * silu_fwd / silu_bwd: y = x·σ(x) (σ kept), ∂x = g·σ·(1 + x(1 − σ))  (docs/model.md §3, ops/unary.ts).
 * siluRowsFwd / siluRowsBwd: a column block of silu (ops/silu-split.ts):
 *   y[r, j] = silu(x[r·ldx + off + j]),  gx[r·ldx + off + j] = g[r, j]·σ(1 + x(1 − σ)), σ = σ(x).
 * binarySame: y = a ∘ b elementwise for ∘ = + − · / (kind 0..3); y may be a (in-place add).
 * copyRows: dst[r·ds + dOff + j] = src[r·ss + so + j], j < w (split / concat, ops/shape.ts).
 * rmsnorm_fwd / rmsnorm_bwd: y = x·r ⊙ w, r = 1/sqrt(mean(x²) + eps) (docs/model.md §2,
 *   ops/rmsnorm.ts); ∂x = r·(ĝ − x̂·mean(ĝ ⊙ x̂)), ĝ = g ⊙ w, x̂ = x·r; ∂w = Σ_rows g ⊙ x̂.
 * Row reductions (∂w) add fixed blocks of rows in double, then the blocks in order (row-blocks.h):
 * the result does not depend on the thread count.
 * fmaPeak / vectorIsa: the machine's measured fp32 peak for this build (fma-peak.h).
 */
#include <math.h>
#include "addon-threads.h"
#include "fast-math.h"
#include "fma-peak.h"
#include "napi-args.h"
#include "row-blocks.h"
#include "sgemm.h"

/* sgemm(transA, transB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc) */
static napi_value Sgemm(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 16, "sgemm")) return NULL;
  float *A = loop_f32(&a, 6), *B = loop_f32(&a, 9), *C = loop_f32(&a, 13);
  long M = loop_long(&a, 2), N = loop_long(&a, 3), K = loop_long(&a, 4);
  if (M <= 0 || N <= 0) return NULL;
  if (!C || (K > 0 && (!A || !B))) { /* (an empty array has no data pointer) */
    napi_throw_type_error(env, NULL, "sgemm: A, B and C must be Float32Arrays");
    return NULL;
  }
  loop_sgemm(loop_bool(&a, 0), loop_bool(&a, 1), M, N, K, (float)loop_num(&a, 5), A + loop_long(&a, 7),
        loop_long(&a, 8), B + loop_long(&a, 10), loop_long(&a, 11), (float)loop_num(&a, 12),
        C + loop_long(&a, 14), loop_long(&a, 15), n_threads);
  return NULL;
}

/* elementwise loops run on all threads above this many elements */
#define PAR_MIN 32768

/* siluFwd(x, y, sig|null, n) */
static napi_value SiluFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 4, "siluFwd")) return NULL;
  const float *x = loop_f32(&a, 0);
  float *y = loop_f32(&a, 1), *sig = loop_f32(&a, 2);
  long n = loop_long(&a, 3);
  if (sig) {
#pragma omp parallel for simd num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) {
      float s = loop_sigmoid(x[i]);
      sig[i] = s;
      y[i] = x[i] * s;
    }
  } else {
#pragma omp parallel for simd num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] * loop_sigmoid(x[i]);
  }
  return NULL;
}

/* siluBwd(x, sig, g, gx, n) */
static napi_value SiluBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 5, "siluBwd")) return NULL;
  const float *x = loop_f32(&a, 0), *sig = loop_f32(&a, 1), *g = loop_f32(&a, 2);
  float *gx = loop_f32(&a, 3);
  long n = loop_long(&a, 4);
#pragma omp parallel for simd num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
  for (long i = 0; i < n; i++) gx[i] = g[i] * sig[i] * (1.0f + x[i] * (1.0f - sig[i]));
  return NULL;
}

/* siluRowsFwd(x, off, ldx, y, rows, w): y [rows, w] */
static napi_value SiluRowsFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 6, "siluRowsFwd")) return NULL;
  const float *x = loop_f32(&a, 0);
  long off = loop_long(&a, 1), ldx = loop_long(&a, 2);
  float *y = loop_f32(&a, 3);
  long rows = loop_long(&a, 4), w = loop_long(&a, 5);
  if (rows <= 0 || w <= 0) return NULL;
  if (!x || !y) {
    napi_throw_type_error(env, NULL, "siluRowsFwd: x and y must be Float32Arrays");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (rows * w >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * ldx + off;
    float *yr = y + r * w;
#pragma omp simd
    for (long j = 0; j < w; j++) yr[j] = xr[j] * loop_sigmoid(xr[j]);
  }
  return NULL;
}

/* siluRowsBwd(x, off, ldx, g|null, gx, rows, w): gx has x's layout; g null writes zeros */
static napi_value SiluRowsBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 7, "siluRowsBwd")) return NULL;
  const float *x = loop_f32(&a, 0);
  long off = loop_long(&a, 1), ldx = loop_long(&a, 2);
  const float *g = loop_f32(&a, 3);
  float *gx = loop_f32(&a, 4);
  long rows = loop_long(&a, 5), w = loop_long(&a, 6);
  if (rows <= 0 || w <= 0) return NULL;
  if (!x || !gx) {
    napi_throw_type_error(env, NULL, "siluRowsBwd: x and gx must be Float32Arrays");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (rows * w >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++) {
    const float *xr = x + r * ldx + off;
    float *gr = gx + r * ldx + off;
    if (!g) {
      memset(gr, 0, w * sizeof(float));
      continue;
    }
    const float *gyr = g + r * w;
#pragma omp simd
    for (long j = 0; j < w; j++) {
      float v = xr[j], sg = loop_sigmoid(v);
      gr[j] = gyr[j] * sg * (1.0f + v * (1.0f - sg));
    }
  }
  return NULL;
}

/* binarySame(kind, a, b, y, n): kind 0 add, 1 sub, 2 mul, 3 div; y may alias a or b */
static napi_value BinarySame(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 5, "binarySame")) return NULL;
  int kind = (int)loop_long(&a, 0);
  const float *x = loop_f32(&a, 1), *z = loop_f32(&a, 2);
  float *y = loop_f32(&a, 3);
  long n = loop_long(&a, 4);
  if (n <= 0) return NULL;
  if (!x || !z || !y) {
    napi_throw_type_error(env, NULL, "binarySame: a, b and y must be Float32Arrays");
    return NULL;
  }
  switch (kind) {
  case 0:
#pragma omp parallel for simd num_threads(n_threads) if (n >= 4 * PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] + z[i];
    break;
  case 1:
#pragma omp parallel for simd num_threads(n_threads) if (n >= 4 * PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] - z[i];
    break;
  case 2:
#pragma omp parallel for simd num_threads(n_threads) if (n >= 4 * PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] * z[i];
    break;
  default:
#pragma omp parallel for simd num_threads(n_threads) if (n >= 4 * PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] / z[i];
  }
  return NULL;
}

/* copyRows(src, so, ss, dst, dOff, ds, rows, w) */
static napi_value CopyRows(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 8, "copyRows")) return NULL;
  const float *src = loop_f32(&a, 0);
  float *dst = loop_f32(&a, 3);
  long so = loop_long(&a, 1), ss = loop_long(&a, 2), dOff = loop_long(&a, 4), ds = loop_long(&a, 5);
  long rows = loop_long(&a, 6), w = loop_long(&a, 7);
  if (rows <= 0 || w <= 0 || !src || !dst) return NULL;
#pragma omp parallel for num_threads(n_threads) if (rows * w >= 4 * PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++) memcpy(dst + r * ds + dOff, src + r * ss + so, w * sizeof(float));
  return NULL;
}

/* rmsnormFwd(x, w, rows, D, eps, rinv, y): x, y [rows, D], w [D], rinv [rows] */
static napi_value RmsnormFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 7, "rmsnormFwd")) return NULL;
  const float *restrict x = loop_f32(&a, 0), *restrict w = loop_f32(&a, 1);
  long rows = loop_long(&a, 2), D = loop_long(&a, 3);
  float eps = (float)loop_num(&a, 4);
  float *restrict rinv = loop_f32(&a, 5), *restrict y = loop_f32(&a, 6);
#pragma omp parallel for num_threads(n_threads) if (rows * D >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++) {
    const float *restrict xr = x + r * D;
    float *restrict yr = y + r * D;
    float ss = 0;
    /* (a vector sum: a plain float loop stays serial, one add per FMA latency) */
#pragma omp simd reduction(+ : ss)
    for (long j = 0; j < D; j++) ss += xr[j] * xr[j];
    float ri = 1.0f / sqrtf(ss / (float)D + eps);
    rinv[r] = ri;
#pragma omp simd
    for (long j = 0; j < D; j++) yr[j] = xr[j] * ri * w[j];
  }
  return NULL;
}

/* rmsnormBwd(x, w, rows, D, rinv, gy, gx|null, gw|null): gw [D] is overwritten */
static napi_value RmsnormBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 8, "rmsnormBwd")) return NULL;
  const float *restrict x = loop_f32(&a, 0), *restrict w = loop_f32(&a, 1);
  long rows = loop_long(&a, 2), D = loop_long(&a, 3);
  const float *restrict rinv = loop_f32(&a, 4), *restrict gy = loop_f32(&a, 5);
  float *restrict gx = loop_f32(&a, 6), *restrict gw = loop_f32(&a, 7);
  const long rb = loop_block_rows(rows), nb = (rows + rb - 1) / rb;
  LOOP_KEPT(norm_part);
  double *part = gw ? loop_keep(&norm_part, &norm_part_cap, (size_t)(nb * D) * sizeof(double)) : NULL;
  if (gw && !part) {
    napi_throw_error(env, NULL, "rmsnormBwd: out of memory");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (rows * D >= PAR_MIN) schedule(static)
  for (long b = 0; b < nb; b++) {
    long r1 = (b + 1) * rb < rows ? (b + 1) * rb : rows;
    double *pb = part ? part + b * D : NULL;
    if (pb) memset(pb, 0, (size_t)D * sizeof(double));
    for (long r = b * rb; r < r1; r++) {
      const float *restrict xr = x + r * D, *restrict gr = gy + r * D;
      float ri = rinv[r], dot = 0;
#pragma omp simd reduction(+ : dot)
      for (long j = 0; j < D; j++) dot += gr[j] * w[j] * (xr[j] * ri);
      if (pb) {
        double *restrict pr = pb;
#pragma omp simd
        for (long j = 0; j < D; j++) pr[j] += (double)(gr[j] * (xr[j] * ri));
      }
      if (gx) {
        float m = dot / (float)D;
        float *restrict gxr = gx + r * D;
#pragma omp simd
        for (long j = 0; j < D; j++) gxr[j] = ri * (gr[j] * w[j] - xr[j] * ri * m);
      }
    }
  }
  if (gw) {
    loop_sum_blocks_f32(gw, part, nb, D);
  }
  return NULL;
}

/*
 * embeddingBwd(ids, g, gw, n, D) — ops/embedding.ts: gw[ids[i], :] += g[i, :] for i = 0..n−1 in
 * order (ids checked by the forward). Threads own column ranges of every row, so each element
 * of gw adds its terms in row order: the portable loop's bits for any thread count.
 */
static napi_value EmbeddingBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 5, "embeddingBwd")) return NULL;
  const int32_t *ids = loop_i32(&a, 0);
  const float *g = loop_f32(&a, 1);
  float *gw = loop_f32(&a, 2);
  long n = loop_long(&a, 3), D = loop_long(&a, 4);
  if (n <= 0 || D <= 0) return NULL;
  if (!ids || !g || !gw) {
    napi_throw_type_error(env, NULL, "embeddingBwd: ids Int32Array, g and gw Float32Arrays");
    return NULL;
  }
  int nt = n * D >= PAR_MIN ? n_threads : 1;
#pragma omp parallel num_threads(nt)
  {
    int th = omp_get_thread_num(), tn = omp_get_num_threads();
    long j0 = D * th / tn, j1 = D * (th + 1) / tn;
    for (long i = 0; i < n; i++) {
      float *restrict o = gw + (long)ids[i] * D;
      const float *restrict gr = g + i * D;
#pragma omp simd
      for (long j = j0; j < j1; j++) o[j] += gr[j];
    }
  }
  return NULL;
}

/*
 * ceFwd(x, t, lse, y, rows, V, ignore) / ceBwd(x, t, lse, g, gx, rows, V, ignore) — the
 * cross-entropy kernels of src/ops/cross-entropy-kernels.ts on logits x [rows, V]:
 *   forward:  lse_r = m_r + ln Σ_j e^{x_rj − m_r} (m_r the row max, the sum in double),
 *             y_r = lse_r − x_{r,t_r}; rows whose target is `ignore` are left alone
 *   backward: gx_rj = g_r · (e^{x_rj − lse_r} − [j = t_r]); rows with the ignore target or
 *             g_r = 0 are left alone (the caller's zeroed buffer)
 * Rows are independent: any thread count gives the same result.
 */
/* Σ_j e^{x_j − m} in double. As one `omp simd` loop (float exponentials summed in double) GCC
 * left it scalar, and the cross-entropy forward ran at about one exponential per cycle. So:
 * exponentials of a block into a float buffer (a plain vector loop), then the block summed in
 * double 8 lanes at a time. */
typedef float loop_v8f __attribute__((vector_size(32), aligned(4)));
typedef double loop_v8d __attribute__((vector_size(64)));
static double exp_sum_d(const float *restrict x, long n, float m) {
  float buf[256] __attribute__((aligned(64)));
  loop_v8d acc = {0};
  double s = 0;
  for (long j0 = 0; j0 < n; j0 += 256) {
    const long bn = n - j0 < 256 ? n - j0 : 256;
#pragma omp simd
    for (long j = 0; j < bn; j++) buf[j] = loop_exp_neg(x[j0 + j] - m);
    long j = 0;
    for (; j + 8 <= bn; j += 8) acc += __builtin_convertvector(*(const loop_v8f *)(buf + j), loop_v8d);
    for (; j < bn; j++) s += (double)buf[j];
  }
  for (int q = 0; q < 8; q++) s += acc[q];
  return s;
}

static napi_value CeFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 7, "ceFwd")) return NULL;
  const float *restrict x = loop_f32(&a, 0);
  const int32_t *restrict t = loop_i32(&a, 1);
  double *restrict lse = loop_f64(&a, 2);
  float *restrict y = loop_f32(&a, 3);
  long rows = loop_long(&a, 4), V = loop_long(&a, 5), ignore = loop_long(&a, 6);
  if (!x || !t || !lse || !y) {
    napi_throw_type_error(env, NULL, "ceFwd: x, y Float32Array, t Int32Array, lse Float64Array");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (rows * V >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++) {
    if (t[r] == ignore) continue;
    const float *xr = x + r * V;
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (long j = 0; j < V; j++) m = xr[j] > m ? xr[j] : m;
    const double l = (double)m + log(exp_sum_d(xr, V, m));
    lse[r] = l;
    y[r] = (float)(l - (double)xr[t[r]]);
  }
  return NULL;
}

static napi_value CeBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 8, "ceBwd")) return NULL;
  const float *restrict x = loop_f32(&a, 0), *restrict g = loop_f32(&a, 3);
  const int32_t *restrict t = loop_i32(&a, 1);
  const double *restrict lse = loop_f64(&a, 2);
  float *restrict gx = loop_f32(&a, 4);
  long rows = loop_long(&a, 5), V = loop_long(&a, 6), ignore = loop_long(&a, 7);
  if (!x || !t || !lse || !g || !gx) {
    napi_throw_type_error(env, NULL, "ceBwd: x, g, gx Float32Array, t Int32Array, lse Float64Array");
    return NULL;
  }
#pragma omp parallel for num_threads(n_threads) if (rows * V >= PAR_MIN) schedule(static)
  for (long r = 0; r < rows; r++) {
    const float gr = g[r];
    if (t[r] == ignore || gr == 0.0f) continue;
    const float *xr = x + r * V;
    float *o = gx + r * V;
    const double l = lse[r];
#pragma omp simd
    for (long j = 0; j < V; j++) o[j] = gr * loop_exp_neg((float)((double)xr[j] - l));
    o[t[r]] -= gr;
  }
  return NULL;
}

/*
 * adamw(w, g, m, v, n, decay, stepSize, b1, b2, eps, sc2) — the AdamW update of src/optim/adamw.ts
 * on one parameter, in double as the JavaScript loop (and without FMA contraction, so the bits
 * are the same):  m ← b1·m + (1−b1)·g,  v ← b2·v + (1−b2)·g²,
 *                 w ← w·decay − stepSize·m / (√v·sc2 + eps)   (m, v unrounded in the last line).
 * Elementwise: any thread count gives the same result.
 */
__attribute__((optimize("fp-contract=off"))) static napi_value Adamw(napi_env env,
                                                                   napi_callback_info info) {
#pragma STDC FP_CONTRACT OFF /* (clang; GCC goes by the optimize attribute) */
  loop_args a;
  if (!loop_get_args(env, info, &a, 11, "adamw")) return NULL;
  float *restrict w = loop_f32(&a, 0), *restrict m = loop_f32(&a, 2), *restrict v = loop_f32(&a, 3);
  const float *restrict g = loop_f32(&a, 1);
  long n = loop_long(&a, 4);
  const double decay = loop_num(&a, 5), stepSize = loop_num(&a, 6), b1 = loop_num(&a, 7);
  const double b2 = loop_num(&a, 8), eps = loop_num(&a, 9), sc2 = loop_num(&a, 10);
  if (n <= 0 || !w || !g || !m || !v) return NULL;
  const double c1 = 1 - b1, c2 = 1 - b2;
#pragma omp parallel for simd num_threads(n_threads) if (n >= 4 * PAR_MIN) schedule(static)
  for (long i = 0; i < n; i++) {
    const double gi = g[i];
    const double mi = b1 * m[i] + c1 * gi;
    const double vi = b2 * v[i] + c2 * gi * gi;
    m[i] = (float)mi;
    v[i] = (float)vi;
    w[i] = (float)(w[i] * decay - (stepSize * mi) / (sqrt(vi) * sc2 + eps));
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "sgemm", Sgemm);
  loop_export(env, exports, "siluFwd", SiluFwd);
  loop_export(env, exports, "siluBwd", SiluBwd);
  loop_export(env, exports, "siluRowsFwd", SiluRowsFwd);
  loop_export(env, exports, "siluRowsBwd", SiluRowsBwd);
  loop_export(env, exports, "binarySame", BinarySame);
  loop_export(env, exports, "copyRows", CopyRows);
  loop_export(env, exports, "rmsnormFwd", RmsnormFwd);
  loop_export(env, exports, "rmsnormBwd", RmsnormBwd);
  loop_export(env, exports, "adamw", Adamw);
  loop_export(env, exports, "ceFwd", CeFwd);
  loop_export(env, exports, "ceBwd", CeBwd);
  loop_export(env, exports, "embeddingBwd", EmbeddingBwd);
  loop_export(env, exports, "fmaPeak", loop_fma_peak);
  loop_export(env, exports, "vectorIsa", loop_vector_isa);
  loop_export(env, exports, "setThreads", loop_set_threads);
  return exports;
}
