/*
 * Native kernels of @loop/tensor, compiled from source on the user's machine by
 * src/node/native.ts (system C compiler, -O3 -march=native -fopenmp); never downloaded and never
 * required: without a compiler everything runs on the portable kernels.
 *
 * sgemm: C = alpha · op(A) · op(B) + beta · C (sgemm.h), the GemmFn contract of
 *   src/kernels/gemm.ts.
 * silu_fwd / silu_bwd: y = x·σ(x) (σ kept), ∂x = g·σ·(1 + x(1 − σ))  (model.md §3, ops/unary.ts).
 */
#include "fast-math.h"
#include "napi-args.h"
#include "sgemm.h"

static int n_threads = 1;

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

/* setThreads(n): threads used by every kernel of this addon from now on */
static napi_value SetThreads(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 1, "setThreads")) return NULL;
  long n = loop_long(&a, 0);
  n_threads = n < 1 ? 1 : (int)n;
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "sgemm", Sgemm);
  loop_export(env, exports, "siluFwd", SiluFwd);
  loop_export(env, exports, "siluBwd", SiluBwd);
  loop_export(env, exports, "setThreads", SetThreads);
  return exports;
}
