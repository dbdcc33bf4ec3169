/*
 * Native chunked SSD scan of @loop/ssm-kernels (forward and backward, docs/model.md §3.5),
 * compiled from source on the user's machine by src/node/index.ts through @loop/tensor/node
 * `buildNativeAddon`; never downloaded, never required. Each function is the C twin of the
 * portable raw-array kernel named beside it and is tested against it
 * (src/node/native-ssd.test.ts).
 *
 * The algorithm, the saved quantities and their layouts are exactly those of
 * src/ssd-chunked-forward.ts and src/ssd-chunked-backward.ts (read their header comments for the
 * maths): the same per-chunk block products (one regrouped to save a product, see
 * backwardHeads), the same float64 running decay products (never a ratio of exponentials), the
 * same float64 accumulators for ∂Λ, ∂dt and ∂A. Sizes, with
 * L = chunk length (the last chunk may be shorter), nc = ⌈T/Lc⌉ chunks:
 *   x [B,T,H,P], dt [B,T,H], A [H], B/C [B,T,G,N], s0 / final state [B,H,P,N];
 *   saved: chunkStates (Sᵀ before each chunk) [B,H,nc,N,P], cb = C·Bᵀ per chunk [B,nc,G,Lc,Lc].
 * Head h reads group g = floor(h / (H/G)).
 *
 * Conventions. Outputs are allocated by the JavaScript caller and passed in (null where not
 * wanted); every output element is written (outputs need not be zeroed), except that cb gets
 * only what both passes read, the lower triangle j ≤ i < L of each chunk's block. Arrays are
 * checked for type and length, so a wrong call throws instead of reading past an array.
 * Parallel loops run over the same items as the portable parallelFor kernels — (batch, head)
 * for the chunk recurrences, (batch, chunk, group) for C·Bᵀ and the group sums — each item
 * computed entirely by one thread with the serial block products below, so the results are the
 * same bits for any thread count. Scratch is per thread, kept between calls.
 *
 * Rounding. Sums and decay products run in float64 where the portable kernels use float64;
 * factors applied to whole rows (E_i·C_i, w_j·B_j, E_i·gY_i, E_{L−1}·S) are rounded to float32
 * first, and the block products accumulate in float32 (as the portable gemm): the results agree
 * with the portable passes to float32 rounding, not bit for bit.
 */
#include <math.h>
#include <omp.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fast-math.h"
#include "addon-threads.h"
#include "napi-args.h"
#include "sgemm.h"
#include "thread-buffer.h"

/* a parallel loop runs on all threads above this many multiply-adds of work */
#define PAR_MIN_WORK 200000.0

/* ---------------------------------------------------------------------------------------------
 * Argument checking
 * ------------------------------------------------------------------------------------------- */

/* Scan sizes, read from 7 consecutive arguments batch, T, H, P, G, N, Lc. */
typedef struct {
  long batch, T, H, P, G, N, Lc, nc;
} ssd_dims;

/* Reads and checks the sizes (all positive integers, H divisible by G); 0 and a thrown error
 * when invalid. A scan with no element (batch or T zero) returns 1 with nc = 0. */
static int arg_dims(loop_args *a, size_t i, const char *fn, ssd_dims *d) {
  long v[7];
  const char *names[7] = {"batch", "T", "H", "P", "G", "N", "Lc"};
  for (int k = 0; k < 7; k++) {
    double x = loop_num(a, i + (size_t)k);
    if (!(x >= 0) || x != (double)(long)x || x > 1e12) {
      char msg[160];
      snprintf(msg, sizeof msg, "%s: %s must be a non-negative integer", fn, names[k]);
      napi_throw_range_error(a->env, NULL, msg);
      return 0;
    }
    v[k] = (long)x;
  }
  *d = (ssd_dims){v[0], v[1], v[2], v[3], v[4], v[5], v[6], 0};
  if (d->batch == 0 || d->T == 0) return 1;
  if (d->H < 1 || d->P < 1 || d->G < 1 || d->N < 1 || d->Lc < 1 || d->H % d->G != 0) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s: invalid sizes H=%ld P=%ld G=%ld N=%ld Lc=%ld", fn, d->H, d->P,
             d->G, d->N, d->Lc);
    napi_throw_range_error(a->env, NULL, msg);
    return 0;
  }
  d->nc = (d->T + d->Lc - 1) / d->Lc;
  return 1;
}

/* The opening of the forward and backwardHeads entries: `want` arguments (the last, resets, may
 * be left out) and the sizes from argument `dims_at`. 0 when it threw or there is no chunk to run
 * (batch or T is 0), which the entry returns as undefined. */
static int entry_dims(napi_env env, napi_callback_info info, loop_args *a, size_t want,
                      size_t dims_at, const char *fn, ssd_dims *d) {
  if (!loop_get_args_opt(env, info, a, want, 1, fn)) return 0;
  if (!arg_dims(a, dims_at, fn, d)) return 0;
  return d->nc != 0;
}

/* scratch of the calling thread, kept between calls (thread-buffer.h) */
static __thread void *scratch_buf;
static __thread size_t scratch_cap;

static void *thread_scratch(size_t bytes) { return loop_grow(&scratch_buf, &scratch_cap, bytes); }

/* threads for a parallel loop over `items` items of `work` multiply-adds in all */
static int threads_for(long items, double work) {
  if (work < PAR_MIN_WORK || items < 2) return 1;
  return items < n_threads ? (int)items : n_threads;
}

/* ---------------------------------------------------------------------------------------------
 * Shared pieces
 * ------------------------------------------------------------------------------------------- */

/*
 * One chunk of one head (chunkDecays in ssd-chunked-util.ts): e_k = exp(dt_k·A_h) and
 * E_k = Π_{j≤k} e_j = exp(Λ_k) in float64, and dt_k gathered into a contiguous row.
 * L exponentials per chunk and head, against O(L²·P) block products: libm is not the hot loop.
 * rs (NULL: none) marks document starts of the chunk's positions (packed documents, mamba_ssm's
 * seq_idx): there e_k is exactly 0, so no decay product — and no ∂Λ term, each being
 * gradient × value — crosses the boundary.
 */
static void chunk_decays(const float *dt, long stride, float Ah, long L, double *restrict e,
                         double *restrict E, float *restrict dtc, const float *rs) {
  double acc = 1;
  for (long k = 0; k < L; k++) {
    float d = dt[k * stride];
    dtc[k] = d;
    double v = rs && rs[k] != 0.0f ? 0.0 : exp((double)d * (double)Ah);
    e[k] = v;
    acc *= v;
    E[k] = acc;
  }
}

/* zero L rows of n floats, leading dimension ld */
static void zero_rows(float *p, long L, long n, long ld) {
  for (long i = 0; i < L; i++) memset(p + i * ld, 0, (size_t)n * sizeof(float));
}

/* dst[c·ldd + r] = src[r·lds + c] for r < rows, c < cols (16×16 blocks in registers) */
static void transpose_ld(const float *restrict src, long lds, long rows, long cols,
                         float *restrict dst, long ldd) {
  long r0 = 0;
#if defined(__AVX512F__)
  for (; r0 + 16 <= rows; r0 += 16) {
    long c0 = 0;
    for (; c0 + 16 <= cols; c0 += 16)
      loop_transpose16_ld(src + r0 * lds + c0, lds, dst + c0 * ldd + r0, ldd); /* sgemm.h */
    for (long r = r0; r < r0 + 16; r++)
      for (long c = c0; c < cols; c++) dst[c * ldd + r] = src[r * lds + c];
  }
#endif
  for (long r = r0; r < rows; r++)
    for (long c = 0; c < cols; c++) dst[c * ldd + r] = src[r * lds + c];
}

/* dst[c·rows + r] = src[r·cols + c]: a contiguous rows×cols block to cols×rows */
static void transpose(const float *restrict src, long rows, long cols, float *restrict dst) {
  transpose_ld(src, cols, rows, cols, dst, rows);
}

/* ---------------------------------------------------------------------------------------------
 * Block products without packing
 *
 * The blocks are small (L ≤ chunk, P, N: tens of rows and columns) and live in L1/L2, so instead
 * of the packed sgemm.h path (whose packing costs as much as the product at these sizes) each
 * product streams the rows of B straight from memory into a register tile of RB (RB_NARROW)
 * rows × CB vectors (vf, VW floats, from sgemm.h), broadcasting the A entries. B is always
 * row-major (callers transpose small operands into scratch first); A may be read transposed.
 * Triangular A skips the k range that is zero; a lower output skips the column vectors entirely
 * above the diagonal. Each element of C is one sum over k in increasing order whatever the
 * blocking: no dependence on threads.
 * ------------------------------------------------------------------------------------------- */

#if VW == 16
/* 6×4 zmm accumulators + 4 B vectors + 1 broadcast ≤ 32 registers; narrow products (≤ 2
 * vectors of columns) take 12 rows, so that at least 12 independent sums hide the FMA latency */
#define RB 6
#define CB 4
#define RB_NARROW 12
#else
#define RB 4
#define CB 2
#define RB_NARROW 4
#endif
#define RB_MAX (RB_NARROW > RB ? RB_NARROW : RB)

enum {
  A_LOWER = 1, /* A(i,k) = 0 for k > i: k < i + 1 only */
  A_UPPER = 2, /* A(i,k) = 0 for k < i: k ≥ i only */
  C_LOWER = 4, /* only C(i,j), j ≤ i, is wanted (others may be written with any value) */
};

/* one register tile: rb rows × nv vectors of C, k in [k0, k1) */
static inline __attribute__((always_inline)) void mm_tile(const int rb, const int nv, long k0,
                                                          long k1, const float *A, long sa,
                                                          long sk, const float *B, long ldb,
                                                          int acc, float *C, long ldc) {
  vf c[RB_MAX][CB];
#pragma GCC unroll 12
  for (int i = 0; i < rb; i++)
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) c[i][v] = (vf){0};
  const float *a = A + k0 * sk, *b = B + k0 * ldb;
  for (long k = k0; k < k1; k++, a += sk, b += ldb) {
    vf bv[CB];
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) bv[v] = *(const vf *)(b + v * VW);
#pragma GCC unroll 12
    for (int i = 0; i < rb; i++) {
      vf ai = a[i * sa] - (vf){0}; /* (x − 0 is x: a plain broadcast; x + 0 is not, for x = −0) */
#pragma GCC unroll 4
      for (int v = 0; v < nv; v++) c[i][v] += ai * bv[v];
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < rb; i++)
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) {
      vf *p = (vf *)(C + i * ldc + v * VW);
      *p = acc ? *p + c[i][v] : c[i][v];
    }
}

/*
 * The last Nn mod VW columns as one masked vector (AVX-512, AVX2): a chunk of 24 positions has
 * 8 of its 24 columns there on AVX-512, and a scalar dot product per element cost the Mano-shaped
 * scan (T = 24) more than its vector part. Each element is the same sum over k in the same order
 * as the vector tiles'.
 */
#if VW == 16 && defined(__AVX512F__)
#define MM_TAIL 1
typedef __mmask16 tail_mask;
static inline tail_mask tail_mask_of(long n) { return (__mmask16)((1u << n) - 1u); }
static inline vf load_tail(const float *p, tail_mask m) { return (vf)_mm512_maskz_loadu_ps(m, p); }
static inline void store_tail(float *p, vf v, tail_mask m) { _mm512_mask_storeu_ps(p, m, (__m512)v); }
#elif VW == 8 && defined(__AVX2__)
#define MM_TAIL 1
typedef __m256i tail_mask;
static inline tail_mask tail_mask_of(long n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vf load_tail(const float *p, tail_mask m) { return (vf)_mm256_maskload_ps(p, m); }
static inline void store_tail(float *p, vf v, tail_mask m) { _mm256_maskstore_ps(p, m, (__m256)v); }
#else
#define MM_TAIL 0
#endif

#if MM_TAIL
/* rb rows × one masked vector of C (columns under m), k in [k0, k1) */
static inline __attribute__((always_inline)) void mm_tile_tail(const int rb, long k0, long k1,
                                                               const float *A, long sa, long sk,
                                                               const float *B, long ldb, int acc,
                                                               float *C, long ldc, tail_mask m) {
  vf c[RB_MAX];
#pragma GCC unroll 12
  for (int i = 0; i < rb; i++) c[i] = (vf){0};
  const float *a = A + k0 * sk, *b = B + k0 * ldb;
  for (long k = k0; k < k1; k++, a += sk, b += ldb) {
    const vf bv = load_tail(b, m);
#pragma GCC unroll 12
    for (int i = 0; i < rb; i++) c[i] += (a[i * sa] - (vf){0}) * bv;
  }
#pragma GCC unroll 12
  for (int i = 0; i < rb; i++) {
    float *p = C + i * ldc;
    store_tail(p, acc ? load_tail(p, m) + c[i] : c[i], m);
  }
}

#define MM_TAIL_CASE(R)                                                                        \
  case R:                                                                                      \
    mm_tile_tail(R, k0, k1, A + i0 * sa, sa, sk, B + jt, ldb, acc, C + i0 * ldc + jt, ldc, m); \
    break;
#endif

#define MM_CASE(R, V)                                                                      \
  case (R) * 8 + (V):                                                                      \
    mm_tile(R, V, k0, k1, A + i0 * sa, sa, sk, B + j0, ldb, acc, C + i0 * ldc + j0, ldc); \
    break;
#if VW == 16
#define MM_CASES_W(R) MM_CASE(R, 1) MM_CASE(R, 2) MM_CASE(R, 3) MM_CASE(R, 4)
#define MM_CASES_N(R) MM_CASE(R, 1) MM_CASE(R, 2)
#define MM_CASES                                                                          \
  MM_CASES_W(1) MM_CASES_W(2) MM_CASES_W(3) MM_CASES_W(4) MM_CASES_W(5) MM_CASES_W(6)     \
  MM_CASES_N(7) MM_CASES_N(8) MM_CASES_N(9) MM_CASES_N(10) MM_CASES_N(11) MM_CASES_N(12)
#else
#define MM_CASES_W(R) MM_CASE(R, 1) MM_CASE(R, 2)
#define MM_CASES MM_CASES_W(1) MM_CASES_W(2) MM_CASES_W(3) MM_CASES_W(4)
#endif

/*
 * C (=, or += with acc) op(A)·B: M×Nn, inner size K; op(A)(i,k) = A[i·sa + k·sk] (A: sa = lda,
 * sk = 1; Aᵀ: sa = 1, sk = lda), B row-major with leading dimension ldb; `mode` of A_LOWER,
 * A_UPPER, C_LOWER (see above).
 */
static void mm(long M, long Nn, long K, int mode, const float *A, long sa, long sk, const float *B,
               long ldb, int acc, float *C, long ldc) {
  const long nvec = Nn / VW, jt = nvec * VW;
  const int rbm = nvec <= 2 ? RB_NARROW : RB; /* rows per register tile */
  for (long i0 = 0; i0 < M; i0 += rbm) {
    const int rb = M - i0 < rbm ? (int)(M - i0) : rbm;
    const long k0 = (mode & A_UPPER) ? i0 : 0;
    const long k1 = (mode & A_LOWER) && i0 + rb < K ? i0 + rb : K;
    /* column vectors this row block needs */
    long nv_all = nvec;
    if (mode & C_LOWER) {
      long need = (i0 + rb + VW - 1) / VW;
      if (need < nv_all) nv_all = need;
    }
    for (long jv = 0; jv < nv_all; jv += CB) {
      const int nv = nv_all - jv < CB ? (int)(nv_all - jv) : CB;
      const long j0 = jv * VW;
      switch (rb * 8 + nv) { MM_CASES }
    }
    /* the last Nn mod VW columns */
#if MM_TAIL
    if (jt < Nn && !((mode & C_LOWER) && jt >= i0 + rb)) {
      const tail_mask m = tail_mask_of(Nn - jt);
      switch (rb) {
        MM_TAIL_CASE(1) MM_TAIL_CASE(2) MM_TAIL_CASE(3) MM_TAIL_CASE(4)
#if RB_MAX > 4
        MM_TAIL_CASE(5) MM_TAIL_CASE(6) MM_TAIL_CASE(7) MM_TAIL_CASE(8)
        MM_TAIL_CASE(9) MM_TAIL_CASE(10) MM_TAIL_CASE(11) MM_TAIL_CASE(12)
#endif
      }
      continue;
    }
#endif
    for (long j = jt; j < Nn; j++) {
      if ((mode & C_LOWER) && j >= i0 + rb) break;
      for (int i = 0; i < rb; i++) {
        const float *a = A + (i0 + i) * sa;
        float s = 0;
        for (long k = k0; k < k1; k++) s += a[k * sk] * B[k * ldb + j];
        float *p = C + (i0 + i) * ldc + j;
        *p = acc ? *p + s : s;
      }
    }
  }
}

/* The D skip of docs/model.md §3.5 on one chunk of one head, L rows of P (leading dimension ld):
 *   forward y += D_h·x (the arithmetic of addDSkip's y + D·x);
 *   backward gx += D_h·gy and the chunk's Σ gy ⊙ x in double (for ∂D_h). */
static void dskip_rows(float *y, const float *x, long ld, long L, long P, float dh) {
  for (long i = 0; i < L; i++) {
    float *restrict yr = y + i * ld;
    const float *restrict xr = x + i * ld;
    for (long p = 0; p < P; p++) yr[p] = yr[p] + dh * xr[p];
  }
}

static double dskip_rows_bwd(float *gx, const float *gy, const float *x, long ld, long L, long P,
                             float dh) {
  double s = 0;
  for (long i = 0; i < L; i++) {
    float *restrict gr = gx + i * ld;
    const float *restrict gyr = gy + i * ld, *restrict xr = x + i * ld;
#pragma omp simd reduction(+ : s)
    for (long p = 0; p < P; p++) {
      gr[p] = gr[p] + dh * gyr[p];
      s += (double)gyr[p] * (double)xr[p];
    }
  }
  return s;
}

/* ---------------------------------------------------------------------------------------------
 * Forward (ssdChunkedForward: cbKernel, then scanKernel)
 * ------------------------------------------------------------------------------------------- */

/*
 * forward(x, dt, A, B, C, s0|null, y, state, cb, chunkStates|null, D|null,
 *         batch, T, H, P, G, N, Lc[, resets|null])   (resets [B·T]: document starts, chunk_decays)
 * Per (b, c, g): cb = C·Bᵀ [L,L]. Per (b, h), chunks in order, with Sᵀ [N,P] the running
 * transposed state (s0ᵀ or zero to start), e, E the decays of the chunk:
 *   M_ij = cb_ij · exp(Λ_i − Λ_j) · dt_j (j ≤ i, else 0);  Y = M·X;  Y += diag(E)·C·Sᵀ
 *   Sᵀ ← E_{L−1}·Sᵀ + (diag(w)·B)ᵀ·X,  w_j = exp(Λ_{L−1} − Λ_j)·dt_j   (docs/model.md §3.5)
 * chunkStates (when given) receives Sᵀ before each chunk, state the final S [B,H,P,N], cb only
 * its lower triangles. With D [H], each chunk's Y also gets the D skip, Y += D_h·X, while X is
 * in cache (addDSkip's pass over y and x, saved). Shapes in the file header; y [B,T,H,P].
 */
static napi_value Forward(napi_env env, napi_callback_info info) {
  const char *fn = "ssd forward";
  loop_args a;
  ssd_dims d;
  if (!entry_dims(env, info, &a, 19, 11, fn, &d)) return NULL;
  const long T = d.T, H = d.H, P = d.P, G = d.G, N = d.N, Lc = d.Lc, nc = d.nc;
  const long BT = d.batch * T, PN = P * N, LL = Lc * Lc, BH = d.batch * H;
  int bad = 0;
  const float *x = loop_arg_f32(&a, 0, BT * H * P, 0, fn, "x", &bad);
  const float *dt = loop_arg_f32(&a, 1, BT * H, 0, fn, "dt", &bad);
  const float *A = loop_arg_f32(&a, 2, H, 0, fn, "A", &bad);
  const float *B = loop_arg_f32(&a, 3, BT * G * N, 0, fn, "B", &bad);
  const float *C = loop_arg_f32(&a, 4, BT * G * N, 0, fn, "C", &bad);
  const float *s0 = loop_arg_f32(&a, 5, BH * PN, 1, fn, "s0", &bad);
  float *y = loop_arg_f32(&a, 6, BT * H * P, 0, fn, "y", &bad);
  float *state = loop_arg_f32(&a, 7, BH * PN, 0, fn, "state", &bad);
  float *cb = loop_arg_f32(&a, 8, d.batch * nc * G * LL, 0, fn, "cb", &bad);
  float *cs = loop_arg_f32(&a, 9, BH * nc * PN, 1, fn, "chunkStates", &bad);
  const float *Dk = loop_arg_f32(&a, 10, H, 1, fn, "D", &bad);
  const float *rs = loop_arg_f32(&a, 18, BT, 1, fn, "resets", &bad);
  if (bad) return NULL;
  const long ldx = H * P, ldb = G * N, hpg = H / G;

  /* C·Bᵀ per (b, c, g) */
  const long ncb = d.batch * nc * G;
  const int t1 = threads_for(ncb, (double)ncb * Lc * Lc * N);
#pragma omp parallel num_threads(t1)
  {
    float *Bt = thread_scratch(sizeof(float) * (size_t)(N * Lc));
#pragma omp for schedule(static)
    for (long item = 0; item < ncb; item++) {
      const long g = item % G, c = (item / G) % nc, b = item / (G * nc);
      const long t0 = c * Lc, L = T - t0 < Lc ? T - t0 : Lc;
      const long bc = ((b * T + t0) * G + g) * N;
      transpose_ld(B + bc, ldb, L, N, Bt, Lc);
      /* the lower triangle only: the passes read cb_ij for j ≤ i */
      mm(L, L, N, C_LOWER, C + bc, ldb, 1, Bt, Lc, 0, cb + item * LL, Lc);
    }
  }

  /* the chunk recurrence per (b, h) */
  const int t2 = threads_for(BH, (double)BH * T * (Lc * P + 2.0 * N * P));
#pragma omp parallel num_threads(t2)
  {
    double *dbl = thread_scratch(sizeof(double) * (size_t)(3 * Lc) +
                                 sizeof(float) * (size_t)(PN + LL + 2 * Lc * N + Lc));
    float *st = (float *)(dbl + 3 * Lc), *M = st + PN, *W = M + LL, *Wb = W + Lc * N;
    float *dtc = Wb + Lc * N;
    double *e = dbl, *E = dbl + Lc, *dec = dbl + 2 * Lc;
#pragma omp for schedule(static)
    for (long item = 0; item < BH; item++) {
      const long h = item % H, b = item / H, g = h / hpg;
      if (s0)
        transpose(s0 + item * PN, P, N, st);
      else
        memset(st, 0, sizeof(float) * (size_t)PN);
      for (long c = 0; c < nc; c++) {
        const long t0 = c * Lc, L = T - t0 < Lc ? T - t0 : Lc;
        const int zeroPrev = !s0 && c == 0; /* the state before chunk 0 is exactly zero */
        const long bc = ((b * T + t0) * G + g) * N;
        const float *cbk = cb + ((b * nc + c) * G + g) * LL;
        const long dtOff = (b * T + t0) * H + h, xOff = ((b * T + t0) * H + h) * P;
        chunk_decays(dt + dtOff, H, A[h], L, e, E, dtc, rs ? rs + b * T + t0 : NULL);
        /* row i of the decays, dec_j = exp(Λ_i − Λ_j), updated from row i−1 */
        for (long i = 0; i < L; i++) {
          const double ei = e[i];
          const float *restrict cbr = cbk + i * Lc;
          float *restrict Mr = M + i * Lc;
          double *restrict dc = dec;
          for (long j = 0; j < i; j++) {
            double v = dc[j] * ei;
            dc[j] = v;
            Mr[j] = (float)((double)cbr[j] * v * (double)dtc[j]);
          }
          dc[i] = 1;
          Mr[i] = (float)((double)cbr[i] * (double)dtc[i]);
          for (long j = i + 1; j < L; j++) Mr[j] = 0.0f;
        }
        mm(L, P, L, A_LOWER, M, Lc, 1, x + xOff, ldx, 0, y + xOff, ldx);
        if (cs) memcpy(cs + (item * nc + c) * PN, st, sizeof(float) * (size_t)PN);
        if (!zeroPrev) {
          for (long i = 0; i < L; i++) {
            const float Ei = (float)E[i];
            const float *restrict cr = C + bc + i * ldb;
            float *restrict wr = W + i * N;
            for (long n = 0; n < N; n++) wr[n] = Ei * cr[n];
          }
          mm(L, P, N, 0, W, N, 1, st, P, 1, y + xOff, ldx);
        }
        if (Dk) dskip_rows(y + xOff, x + xOff, ldx, L, P, Dk[h]);
        /* Sᵀ ← E_{L−1}·Sᵀ + (diag(w)·B)ᵀ·X */
        double wdec = 1;
        for (long j = L - 1; j >= 0; j--) {
          const float w = (float)(wdec * (double)dtc[j]);
          const float *restrict br = B + bc + j * ldb;
          float *restrict wr = Wb + j * N;
          for (long n = 0; n < N; n++) wr[n] = w * br[n];
          wdec *= e[j];
        }
        const float EL = (float)E[L - 1];
        for (long k = 0; k < PN; k++) st[k] *= EL;
        mm(N, P, L, 0, Wb, 1, N, x + xOff, ldx, 1, st, P);
      }
      transpose(st, N, P, state + item * PN);
    }
  }
  return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Backward (ssdChunkedBackward: headKernel, then groupKernel)
 * ------------------------------------------------------------------------------------------- */

/*
 * backwardHeads(x, dt, A, B, C, hasS0, gy|null, gState|null, chunkStates, cb, gx, gdt, gA,
 *               gs0|null, gBh, gCh, dCB|null, D|null, gD|null, batch, T, H, P, G, N, Lc
 *               [, resets|null])
 * The reverse chunk recurrence per (b, h) (headKernel), carrying Rᵀ = (∂L/∂S_end)ᵀ [N,P]
 * (gStateᵀ or zero to start). Per chunk, last to first (docs/model.md §3.5, ssd-chunked-backward.ts):
 *   dM = gY·Xᵀ;  d(CBᵀ)_ij = dM_ij·exp(Λ_i−Λ_j)·dt_j;  dX = Mᵀ·gY + diag(w)·B·Rᵀ
 *   gŶ = diag(E)·gY;  dC_h = gŶ·S_prev;  dB_h = diag(w)·X·R
 *   Rᵀ_prev = E_{L−1}·Rᵀ + Cᵀ·gŶ;  ∂Λ from every f·exp(Λ_i − Λ_j) term (float64), then
 *   ∂dt_k = ∂dt_k(direct) + A·Σ_{i≥k} ∂Λ_i,  ∂A = Σ_k dt_k·Σ_{i≥k} ∂Λ_i (summed over b in order).
 * Writes dx, ddt, dA [H], the initial-state gradient gs0 [B,H,P,N] (with hasS0), and for the
 * group pass the per-head partials gBh, gCh [B,T,H,N] and the lower triangles of d(C·Bᵀ),
 * dCB [B,nc,H,Lc(Lc+1)/2] (row i at i(i+1)/2, with gy; a packed layout private to this addon:
 * half the memory traffic of the square blocks the portable kernel keeps). With D (the forward's
 * D skip): dX += D_h·gY, and gD [H] (when given) = Σ gY ⊙ X, per (b, h) in double, then over b
 * in order.
 */
/* The head pass's inputs and outputs (null where not given). */
typedef struct {
  const float *x, *dt, *A, *B, *C, *gy, *gs, *cs, *cb, *Dk;
  const float *rs; /* document starts [B·T] (packed documents, chunk_decays), or null */
  float *gx, *gdt, *gA, *gs0, *gBh, *gCh, *dCB, *gD;
  int hasS0;
} ssd_bwd;

/* One thread's scratch for one (b, h) item: Rᵀ, M, dM, gŶ, a [L,P] temporary, dt of the chunk,
 * the transposed operands, and the float64 decays and ∂Λ, ∂dt accumulators. */
typedef struct {
  float *rt, *M, *dM, *gYs, *tmp, *dtc, *Xt, *Sp, *Rp;
  double *e, *E, *dec, *dAc, *ddt;
} bwd_scratch;

static bwd_scratch bwd_thread_scratch(long Lc, long P, long N) {
  const long PN = P * N, LL = Lc * Lc;
  double *dbl = thread_scratch(sizeof(double) * (size_t)(5 * Lc) +
                               sizeof(float) * (size_t)(3 * PN + 2 * LL + 3 * Lc * P + Lc));
  bwd_scratch s;
  s.rt = (float *)(dbl + 5 * Lc);
  s.M = s.rt + PN;
  s.dM = s.M + LL;
  s.gYs = s.dM + LL;
  s.tmp = s.gYs + Lc * P;
  s.dtc = s.tmp + Lc * P;
  s.Xt = s.dtc + Lc;
  s.Sp = s.Xt + Lc * P;
  s.Rp = s.Sp + PN;
  s.e = dbl;
  s.E = s.e + Lc;
  s.dec = s.E + Lc;
  s.dAc = s.dec + Lc;
  s.ddt = s.dAc + Lc;
  return s;
}

/* Where chunk c of item (b, h) lives in the arrays. */
typedef struct {
  long h, g, L, bc, hOff, dtOff, xOff;
  const float *rs;    /* the document starts of the chunk's positions, or null */
  int zeroPrev;       /* the state before this chunk is exactly zero (chunk 0, no s0) */
  const float *cbk;   /* C·Bᵀ of the chunk's group [L,Lc] */
  const float *sPrev; /* Sᵀ before the chunk [N,P] */
  float *dcb;         /* packed d(C·Bᵀ) of the chunk and head, or null */
} bwd_chunk;

static bwd_chunk bwd_chunk_at(const ssd_dims *d, const ssd_bwd *a, long item, long c) {
  const long T = d->T, H = d->H, P = d->P, G = d->G, N = d->N, Lc = d->Lc, nc = d->nc;
  const long h = item % H, b = item / H, g = h / (H / G), t0 = c * Lc;
  const long LT = Lc * (Lc + 1) / 2;
  bwd_chunk k;
  k.h = h;
  k.g = g;
  k.L = T - t0 < Lc ? T - t0 : Lc;
  k.bc = ((b * T + t0) * G + g) * N;
  k.hOff = ((b * T + t0) * H + h) * N;
  k.dtOff = (b * T + t0) * H + h;
  k.xOff = ((b * T + t0) * H + h) * P;
  k.rs = a->rs ? a->rs + b * T + t0 : NULL;
  k.zeroPrev = !a->hasS0 && c == 0;
  k.cbk = a->cb + ((b * nc + c) * G + g) * Lc * Lc;
  k.sPrev = a->cs + (item * nc + c) * P * N;
  k.dcb = a->dCB ? a->dCB + ((b * nc + c) * H + h) * LT : NULL;
  return k;
}

/*
 * Intra-chunk block (with gy): dM = gY·Xᵀ; M rebuilt row by row; d(CBᵀ)_ij = dM_ij·exp(Λ_i−Λ_j)·dt_j
 * (packed); ∂dt and ∂Λ from every M_ij = cb_ij·exp(Λ_i−Λ_j)·dt_j; then dX = Mᵀ·gY.
 */
static void bwd_intra_chunk(const ssd_dims *d, const ssd_bwd *a, const bwd_chunk *k,
                            bwd_scratch *s) {
  const long P = d->P, Lc = d->Lc, L = k->L, ldx = d->H * d->P;
  transpose_ld(a->x + k->xOff, ldx, L, P, s->Xt, Lc);
  mm(L, L, P, C_LOWER, a->gy + k->xOff, ldx, 1, s->Xt, Lc, 0, s->dM, Lc);
  for (long i = 0; i < L; i++) {
    const double ei = s->e[i];
    const float *restrict cbr = k->cbk + i * Lc;
    const float *restrict dMr = s->dM + i * Lc;
    const float *restrict dtc = s->dtc;
    float *restrict Mr = s->M + i * Lc;
    float *restrict dcr = k->dcb + i * (i + 1) / 2;
    double *restrict dc = s->dec, *restrict dd = s->ddt, *restrict da = s->dAc;
    double dAi = 0;
#pragma omp simd reduction(+ : dAi)
    for (long j = 0; j < i; j++) {
      const double lij = dc[j] * ei;
      dc[j] = lij;
      const double dtj = dtc[j], cbij = cbr[j], dm = dMr[j];
      const double m = cbij * lij * dtj;
      Mr[j] = (float)m;
      dcr[j] = (float)(dm * lij * dtj);
      dd[j] += dm * cbij * lij;
      const double dseg = dm * m;
      dAi += dseg;
      da[j] -= dseg;
    }
    {
      dc[i] = 1;
      const double dtj = dtc[i], cbij = cbr[i], dm = dMr[i];
      const double m = cbij * dtj;
      Mr[i] = (float)m;
      dcr[i] = (float)(dm * dtj);
      dd[i] += dm * cbij;
      const double dseg = dm * m;
      dAi += dseg;
      da[i] -= dseg;
    }
    for (long j = i + 1; j < L; j++) Mr[j] = 0.0f;
    da[i] += dAi;
  }
  mm(L, P, L, A_UPPER, s->M, 1, Lc, a->gy + k->xOff, ldx, 0, a->gx + k->xOff, ldx);
}

/*
 * State → output (with gy): gŶ = diag(E)·gY; unless the previous state is zero, dC_h = gŶ·S_prev
 * and ∂Λ_i += gŶ_i·(S_prev·C_i) = C_i·(dC_h)_i (the portable kernel forms C·S_prevᵀ for it; this
 * is the same sum regrouped, one product less). Returns whether gCh of the chunk was written.
 */
static int bwd_state_to_output(const ssd_dims *d, const ssd_bwd *a, const bwd_chunk *k,
                               bwd_scratch *s) {
  const long P = d->P, N = d->N, L = k->L, ldx = d->H * d->P;
  const long ldb = d->G * d->N, ldh = d->H * d->N;
  for (long i = 0; i < L; i++) {
    const float Ei = (float)s->E[i];
    const float *restrict gr = a->gy + k->xOff + i * ldx;
    float *restrict sr = s->gYs + i * P;
    for (long p = 0; p < P; p++) sr[p] = Ei * gr[p];
  }
  if (k->zeroPrev) return 0;
  transpose(k->sPrev, N, P, s->Sp);
  mm(L, N, P, 0, s->gYs, P, 1, s->Sp, N, 0, a->gCh + k->hOff, ldh);
  for (long i = 0; i < L; i++) {
    const float *restrict cr = a->C + k->bc + i * ldb, *restrict gr = a->gCh + k->hOff + i * ldh;
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (long n = 0; n < N; n++) sum += (double)cr[n] * (double)gr[n];
    s->dAc[i] += sum;
  }
  return 1;
}

/*
 * Chunk-state path through R = ∂L/∂S_end (R not zero): RB = B·Rᵀ [L,P]; dX_j += w_j·RB_j,
 * ∂w_j = x_j·RB_j → ∂dt, ∂Λ; dB_h = diag(w)·X·R; ∂Λ_{L−1} += E_{L−1}·⟨R, S_prev⟩.
 */
static void bwd_chunk_state(const ssd_dims *d, const ssd_bwd *a, const bwd_chunk *k,
                            bwd_scratch *s) {
  const long P = d->P, N = d->N, PN = P * N, L = k->L, ldx = d->H * d->P;
  const long ldb = d->G * d->N, ldh = d->H * d->N;
  mm(L, P, N, 0, a->B + k->bc, ldb, 1, s->rt, P, 0, s->tmp, P);
  double dAL = 0, wdec = 1;
  for (long j = L - 1; j >= 0; j--) {
    const double w = wdec * (double)s->dtc[j];
    const float *restrict xr = a->x + k->xOff + j * ldx;
    float *restrict gr = a->gx + k->xOff + j * ldx;
    float *restrict tr = s->tmp + j * P;
    double dw = 0;
#pragma omp simd reduction(+ : dw)
    for (long p = 0; p < P; p++) {
      const double rb = tr[p], xv = xr[p];
      dw += xv * rb;
      gr[p] = (float)((double)gr[p] + w * rb);
      tr[p] = (float)(w * xv);
    }
    s->ddt[j] += dw * wdec;
    const double dseg = dw * w;
    dAL += dseg;
    s->dAc[j] -= dseg;
    wdec *= s->e[j];
  }
  transpose(s->rt, N, P, s->Rp);
  mm(L, N, P, 0, s->tmp, P, 1, s->Rp, N, 0, a->gBh + k->hOff, ldh);
  if (!k->zeroPrev) {
    const float *restrict rt = s->rt, *restrict sp = k->sPrev;
    double dot = 0;
#pragma omp simd reduction(+ : dot)
    for (long q = 0; q < PN; q++) dot += (double)rt[q] * (double)sp[q];
    dAL += s->E[L - 1] * dot;
  }
  s->dAc[L - 1] += dAL;
}

/* Λ → a = dt·A → (dt, A): writes gdt of the chunk and adds Σ_k dt_k·Σ_{i≥k} ∂Λ_i to *gA, term by
 * term (the item's running sum, in the same order as the portable kernel). */
static void bwd_lambda_to_dt_A(const ssd_dims *d, const ssd_bwd *a, const bwd_chunk *k,
                               const bwd_scratch *s, float Ah, double *gA) {
  const long H = d->H;
  double da = 0, acc = *gA;
  for (long q = k->L - 1; q >= 0; q--) {
    da += s->dAc[q];
    a->gdt[k->dtOff + q * H] = (float)(s->ddt[q] + da * (double)Ah);
    acc += da * (double)s->dtc[q];
  }
  *gA = acc;
}

/* The reverse chunk recurrence of one (b, h) item; its ∂A and ∂D partials in *gA, *gD. */
static void bwd_head_item(const ssd_dims *d, const ssd_bwd *a, long item, bwd_scratch *s,
                          double *gA, double *gD) {
  const long H = d->H, P = d->P, N = d->N, PN = P * N, ldx = H * P, ldb = d->G * d->N;
  const long ldh = H * N;
  const long h = item % H;
  const float Ah = a->A[h];
  if (a->gs)
    transpose(a->gs + item * PN, P, N, s->rt);
  else
    memset(s->rt, 0, sizeof(float) * (size_t)PN);
  int zeroR = !a->gs; /* R still exactly zero: no final-state gradient, nothing propagated */
  double gAsum = 0, gDsum = 0;
  for (long c = d->nc - 1; c >= 0; c--) {
    const bwd_chunk k = bwd_chunk_at(d, a, item, c);
    const long L = k.L;
    chunk_decays(a->dt + k.dtOff, H, Ah, L, s->e, s->E, s->dtc, k.rs);
    memset(s->dAc, 0, sizeof(double) * (size_t)L);
    memset(s->ddt, 0, sizeof(double) * (size_t)L);
    int wroteC = 0;
    if (!a->gy) zero_rows(a->gx + k.xOff, L, P, ldx); /* (else dX = Mᵀ·gY writes them) */
    if (a->gy) {
      bwd_intra_chunk(d, a, &k, s);
      wroteC = bwd_state_to_output(d, a, &k, s);
    }
    if (!wroteC) zero_rows(a->gCh + k.hOff, L, N, ldh);
    if (!zeroR)
      bwd_chunk_state(d, a, &k, s);
    else
      zero_rows(a->gBh + k.hOff, L, N, ldh);
    /* Rᵀ_prev = E_{L−1}·Rᵀ + Cᵀ·gŶ (not needed before the first chunk without s0) */
    if (!k.zeroPrev || a->hasS0) {
      const float ELf = (float)s->E[L - 1];
      for (long q = 0; q < PN; q++) s->rt[q] *= ELf;
      if (a->gy) mm(N, P, L, 0, a->C + k.bc, 1, ldb, s->gYs, P, 1, s->rt, P);
    }
    /* the D skip: dX += D_h·gY, ∂D_h += Σ gY ⊙ X (gX of the chunk is complete here) */
    if (a->Dk && a->gy)
      gDsum += dskip_rows_bwd(a->gx + k.xOff, a->gy + k.xOff, a->x + k.xOff, ldx, L, P, a->Dk[h]);
    bwd_lambda_to_dt_A(d, a, &k, s, Ah, &gAsum);
    if (a->gy) zeroR = 0;
  }
  *gA = gAsum;
  *gD = gDsum;
  if (a->gs0) transpose(s->rt, N, P, a->gs0 + item * PN);
}

/* The head pass: every (b, h) item on the OpenMP threads, then gA and gD summed over b in order. */
static void ssd_backward_heads(const ssd_dims *d, const ssd_bwd *a) {
  const long H = d->H, BH = d->batch * H;
  double *gAh = malloc(sizeof(double) * (size_t)(2 * BH)), *gDh = gAh + BH;
  if (!gAh) abort();
  const int nt =
      threads_for(BH, (double)BH * d->T * (2.0 * d->Lc * d->P + 5.0 * d->N * d->P));
#pragma omp parallel num_threads(nt)
  {
    bwd_scratch s = bwd_thread_scratch(d->Lc, d->P, d->N);
#pragma omp for schedule(static)
    for (long item = 0; item < BH; item++) bwd_head_item(d, a, item, &s, gAh + item, gDh + item);
  }
  for (long h = 0; h < H; h++) {
    double v = 0, w = 0;
    for (long b = 0; b < d->batch; b++) v += gAh[b * H + h], w += gDh[b * H + h];
    a->gA[h] = (float)v;
    if (a->gD) a->gD[h] = (float)w;
  }
  free(gAh);
}

/* The N-API entry: arguments read and checked, then ssd_backward_heads. */
static napi_value BackwardHeads(napi_env env, napi_callback_info info) {
  const char *fn = "ssd backwardHeads";
  loop_args args;
  ssd_dims d;
  if (!entry_dims(env, info, &args, 27, 19, fn, &d)) return NULL;
  const long T = d.T, H = d.H, P = d.P, G = d.G, N = d.N, Lc = d.Lc, nc = d.nc;
  const long BT = d.batch * T, PN = P * N, LL = Lc * Lc, BH = d.batch * H;
  const long LT = Lc * (Lc + 1) / 2; /* a packed lower triangle */
  int bad = 0;
  ssd_bwd a;
  a.hasS0 = loop_bool(&args, 5);
  a.x = loop_arg_f32(&args, 0, BT * H * P, 0, fn, "x", &bad);
  a.dt = loop_arg_f32(&args, 1, BT * H, 0, fn, "dt", &bad);
  a.A = loop_arg_f32(&args, 2, H, 0, fn, "A", &bad);
  a.B = loop_arg_f32(&args, 3, BT * G * N, 0, fn, "B", &bad);
  a.C = loop_arg_f32(&args, 4, BT * G * N, 0, fn, "C", &bad);
  a.gy = loop_arg_f32(&args, 6, BT * H * P, 1, fn, "gy", &bad);
  a.gs = loop_arg_f32(&args, 7, BH * PN, 1, fn, "gState", &bad);
  a.cs = loop_arg_f32(&args, 8, BH * nc * PN, 0, fn, "chunkStates", &bad);
  a.cb = loop_arg_f32(&args, 9, d.batch * nc * G * LL, 0, fn, "cb", &bad);
  a.gx = loop_arg_f32(&args, 10, BT * H * P, 0, fn, "gx", &bad);
  a.gdt = loop_arg_f32(&args, 11, BT * H, 0, fn, "gdt", &bad);
  a.gA = loop_arg_f32(&args, 12, H, 0, fn, "gA", &bad);
  a.gs0 = loop_arg_f32(&args, 13, BH * PN, 1, fn, "gs0", &bad);
  a.gBh = loop_arg_f32(&args, 14, BT * H * N, 0, fn, "gBh", &bad);
  a.gCh = loop_arg_f32(&args, 15, BT * H * N, 0, fn, "gCh", &bad);
  a.dCB = loop_arg_f32(&args, 16, a.gy ? d.batch * nc * H * LT : 0, 1, fn, "dCB", &bad);
  a.Dk = loop_arg_f32(&args, 17, H, 1, fn, "D", &bad);
  a.gD = loop_arg_f32(&args, 18, H, 1, fn, "gD", &bad);
  a.rs = loop_arg_f32(&args, 26, BT, 1, fn, "resets", &bad);
  if (!bad && a.gy && !a.dCB) {
    napi_throw_type_error(env, NULL, "ssd backwardHeads: dCB is needed with gy");
    return NULL;
  }
  if (!bad && a.gD && !a.Dk) {
    napi_throw_type_error(env, NULL, "ssd backwardHeads: gD needs D");
    return NULL;
  }
  if (bad) return NULL;
  ssd_backward_heads(&d, &a);
  return NULL;
}

/*
 * backwardGroups(B, C, gBh, gCh, dCB|null, gB, gC, batch, T, H, P, G, N, Lc)
 * Per (b, c, g) (groupKernel): the sums over the group's heads and the two d(C·Bᵀ) products,
 *   dC = Σ_h gC_h + (Σ_h d(CBᵀ)_h)·B,   dB = Σ_h gB_h + (Σ_h d(CBᵀ)_h)ᵀ·C   (docs/model.md §3.5)
 * gBh, gCh [B,T,H,N] and dCB [B,nc,H,Lc(Lc+1)/2] from backwardHeads; gB, gC [B,T,G,N].
 */
static napi_value BackwardGroups(napi_env env, napi_callback_info info) {
  const char *fn = "ssd backwardGroups";
  loop_args a;
  if (!loop_get_args(env, info, &a, 14, fn)) return NULL;
  ssd_dims d;
  if (!arg_dims(&a, 7, fn, &d)) return NULL;
  if (d.nc == 0) return NULL;
  const long T = d.T, H = d.H, G = d.G, N = d.N, Lc = d.Lc, nc = d.nc;
  const long BT = d.batch * T, LL = Lc * Lc;
  int bad = 0;
  const float *B = loop_arg_f32(&a, 0, BT * G * N, 0, fn, "B", &bad);
  const float *C = loop_arg_f32(&a, 1, BT * G * N, 0, fn, "C", &bad);
  const float *gBh = loop_arg_f32(&a, 2, BT * H * N, 0, fn, "gBh", &bad);
  const float *gCh = loop_arg_f32(&a, 3, BT * H * N, 0, fn, "gCh", &bad);
  const long LT = Lc * (Lc + 1) / 2;
  const float *dCB = loop_arg_f32(&a, 4, d.batch * nc * H * LT, 1, fn, "dCB", &bad);
  float *gB = loop_arg_f32(&a, 5, BT * G * N, 0, fn, "gB", &bad);
  float *gC = loop_arg_f32(&a, 6, BT * G * N, 0, fn, "gC", &bad);
  if (bad) return NULL;
  const long ldb = G * N, hpg = H / G;
  const long items = d.batch * nc * G;
  const double work = (double)items * Lc * (hpg * (N + (dCB ? Lc : 0)) + 2.0 * Lc * N);
  const int nt = threads_for(items, work);
#pragma omp parallel num_threads(nt)
  {
    double *acc = thread_scratch(sizeof(double) * (size_t)(2 * N) + sizeof(float) * (size_t)LL);
    float *sum = (float *)(acc + 2 * N);
#pragma omp for schedule(static)
    for (long item = 0; item < items; item++) {
      const long g = item % G, c = (item / G) % nc, b = item / (G * nc);
      const long t0 = c * Lc, L = T - t0 < Lc ? T - t0 : Lc;
      const long bc = ((b * T + t0) * G + g) * N;
      for (long t = 0; t < L; t++) {
        const long src = ((b * T + t0 + t) * H + g * hpg) * N;
        double *restrict sb = acc, *restrict sc = acc + N;
        for (long n = 0; n < N; n++) sb[n] = sc[n] = 0;
        for (long hh = 0; hh < hpg; hh++) {
          const float *restrict pb = gBh + src + hh * N, *restrict pc = gCh + src + hh * N;
          for (long n = 0; n < N; n++) {
            sb[n] += pb[n];
            sc[n] += pc[n];
          }
        }
        float *restrict ob = gB + bc + t * ldb, *restrict oc = gC + bc + t * ldb;
        for (long n = 0; n < N; n++) {
          ob[n] = (float)sb[n];
          oc[n] = (float)sc[n];
        }
      }
      if (!dCB) continue;
      /* Σ_h d(CBᵀ)_h, unpacked into the square L×L block (zero above the diagonal) */
      const float *base = dCB + ((b * nc + c) * H + g * hpg) * LT;
      for (long i = 0; i < L; i++) {
        float *restrict r = sum + i * Lc;
        memcpy(r, base + i * (i + 1) / 2, sizeof(float) * (size_t)(i + 1));
        for (long hh = 1; hh < hpg; hh++) {
          const float *restrict s = base + hh * LT + i * (i + 1) / 2;
          for (long j = 0; j <= i; j++) r[j] += s[j];
        }
        for (long j = i + 1; j < L; j++) r[j] = 0.0f;
      }
      mm(L, N, L, A_LOWER, sum, Lc, 1, B + bc, ldb, 1, gC + bc, ldb);
      mm(L, N, L, A_UPPER, sum, 1, Lc, C + bc, ldb, 1, gB + bc, ldb);
    }
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "forward", Forward);
  loop_export(env, exports, "backwardHeads", BackwardHeads);
  loop_export(env, exports, "backwardGroups", BackwardGroups);
  loop_export(env, exports, "setThreads", loop_set_threads);
  return exports;
}
