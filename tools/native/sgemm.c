/*
 * PROTOTYPE native GEMM for the route to PyTorch parity (docs/engine.md), built from source by
 * tools/native/build-native.ts with the system C compiler; never downloaded, never required.
 *   C = alpha · op(A) · op(B) + beta · C  (row-major, the GemmFn contract of @loop/tensor)
 * Goto/BLIS structure: B packed into NR-column panels per (jc, pc) block, A packed into
 * MR-row panels per (ic, pc) block, an MR×NR register tile written with GCC vector extensions
 * (compiled with -march=native: AVX-512 → 12×32 tile in 24 zmm accumulators, AVX2 → 6×16)
 * and mul+add contracted to FMA. Row blocks of C are split across OpenMP threads.
 */
#include <node_api.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__)
#define VW 16
#define MR 12
#elif defined(__AVX__)
#define VW 8
#define MR 6
#else
#define VW 4
#define MR 4
#endif
#define NR (2 * VW)
#define KC 256
#define MC (MR * 8)
#define NC 4096

typedef float vf __attribute__((vector_size(VW * 4), aligned(4)));

static inline float at(const float *m, long ld, int trans, long r, long c) {
  return trans ? m[c * ld + r] : m[r * ld + c];
}

/* acc = Σ_k a[k·MR + i] · b[k·NR + j]; C tile = alpha·acc + beta·C (beta == 0: C not read) */
static void tile(int kc, const float *a, const float *b, float *c, long ldc, float alpha,
                 float beta, int mr, int nr) {
  vf acc[MR][2];
  memset(acc, 0, sizeof acc);
  for (int k = 0; k < kc; k++) {
    vf b0 = *(const vf *)b, b1 = *(const vf *)(b + VW);
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      vf ai = (vf){0} + a[i];
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
    a += MR;
    b += NR;
  }
  float t[MR * NR];
  for (int i = 0; i < MR; i++) {
    *(vf *)(t + i * NR) = acc[i][0] * alpha;
    *(vf *)(t + i * NR + VW) = acc[i][1] * alpha;
  }
  for (int i = 0; i < mr; i++)
    for (int j = 0; j < nr; j++)
      c[i * ldc + j] = t[i * NR + j] + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
}

static void sgemm(int tA, int tB, long M, long N, long K, float alpha, const float *A, long lda,
                  const float *B, long ldb, float beta, float *C, long ldc, int threads) {
  if (K == 0) {
    for (long i = 0; i < M; i++)
      for (long j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  float *bp = aligned_alloc(64, sizeof(float) * KC * (NC + NR));
  for (long jc = 0; jc < N; jc += NC) {
    long nc = N - jc < NC ? N - jc : NC;
    for (long pc = 0; pc < K; pc += KC) {
      int kc = K - pc < KC ? (int)(K - pc) : KC;
      float bet = pc == 0 ? beta : 1.0f;
      for (long jr = 0; jr < nc; jr += NR) /* pack B: panel of NR columns, k-major */
        for (int k = 0; k < kc; k++)
          for (int j = 0; j < NR; j++)
            bp[jr * kc + k * NR + j] = jr + j < nc ? at(B, ldb, tB, pc + k, jc + jr + j) : 0.0f;
#pragma omp parallel num_threads(threads)
      {
        float *ap = aligned_alloc(64, sizeof(float) * KC * MC);
#pragma omp for schedule(static)
        for (long ic = 0; ic < M; ic += MC) {
          long mc = M - ic < MC ? M - ic : MC;
          for (long ir = 0; ir < mc; ir += MR) /* pack A: panel of MR rows, k-major */
            for (int k = 0; k < kc; k++)
              for (int i = 0; i < MR; i++)
                ap[ir * kc + k * MR + i] = ir + i < mc ? at(A, lda, tA, ic + ir + i, pc + k) : 0.0f;
          for (long jr = 0; jr < nc; jr += NR)
            for (long ir = 0; ir < mc; ir += MR)
              tile(kc, ap + ir * kc, bp + jr * kc, C + (ic + ir) * ldc + jc + jr, ldc, alpha, bet,
                   mc - ir < MR ? (int)(mc - ir) : MR, nc - jr < NR ? (int)(nc - jr) : NR);
        }
        free(ap);
      }
    }
  }
  free(bp);
}

static float *f32(napi_env env, napi_value v, size_t *len) {
  napi_typedarray_type type;
  void *data;
  napi_get_typedarray_info(env, v, &type, len, &data, NULL, NULL);
  return type == napi_float32_array ? (float *)data : NULL;
}

static double num(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

static int flag(napi_env env, napi_value v) {
  bool b = false;
  napi_get_value_bool(env, v, &b);
  return b;
}

/* sgemm(transA, transB, M, N, K, alpha, A, aOff, lda, B, bOff, ldb, beta, C, cOff, ldc, threads) */
static napi_value Sgemm(napi_env env, napi_callback_info info) {
  size_t argc = 17;
  napi_value a[17];
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  if (argc != 17) {
    napi_throw_error(env, NULL, "sgemm: expected 17 arguments");
    return NULL;
  }
  size_t la, lb, lc;
  float *A = f32(env, a[6], &la), *B = f32(env, a[9], &lb), *C = f32(env, a[13], &lc);
  if (!A || !B || !C) {
    napi_throw_type_error(env, NULL, "sgemm: A, B and C must be Float32Arrays");
    return NULL;
  }
  long M = (long)num(env, a[2]), N = (long)num(env, a[3]), K = (long)num(env, a[4]);
  if (M <= 0 || N <= 0) return NULL;
  sgemm(flag(env, a[0]), flag(env, a[1]), M, N, K, (float)num(env, a[5]), A + (long)num(env, a[7]),
        (long)num(env, a[8]), B + (long)num(env, a[10]), (long)num(env, a[11]),
        (float)num(env, a[12]), C + (long)num(env, a[14]), (long)num(env, a[15]),
        (int)num(env, a[16]));
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "sgemm", NAPI_AUTO_LENGTH, Sgemm, NULL, &fn);
  napi_set_named_property(env, exports, "sgemm", fn);
  return exports;
}
