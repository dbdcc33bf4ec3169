/*
 * Native chunked SSD scan of @loop/ssm-kernels (forward and backward, model.md §3.5),
 * compiled from source on the user's machine by src/node/index.ts through @loop/tensor/node
 * `buildNativeAddon`; never downloaded, never required. Each function is the C twin of the
 * portable raw-array kernel named beside it and is tested against it
 * (src/node/native-ssd.test.ts).
 *
 * The algorithm, the saved quantities and their layouts are exactly those of
 * src/ssd-chunked-forward.ts and src/ssd-chunked-backward.ts (read their header comments for the
 * maths): the same per-chunk block products, the same float64 running decay products (never a
 * ratio of exponentials), the same float64 accumulators for ∂Λ, ∂dt and ∂A. Sizes, with
 * L = chunk length (the last chunk may be shorter), nc = ⌈T/Lc⌉ chunks:
 *   x [B,T,H,P], dt [B,T,H], A [H], B/C [B,T,G,N], s0 / final state [B,H,P,N];
 *   saved: chunkStates (Sᵀ before each chunk) [B,H,nc,N,P], cb = C·Bᵀ per chunk [B,nc,G,Lc,Lc].
 * Head h reads group g = floor(h / (H/G)).
 *
 * Conventions. Outputs are allocated by the JavaScript caller and passed in (null where not
 * wanted); every output element is written (outputs need not be zeroed). Arrays are checked for
 * type and length, so a wrong call throws instead of reading past an array. Parallel loops run
 * over the same items as the portable parallelFor kernels — (batch, head) for the chunk
 * recurrences, (batch, chunk, group) for C·Bᵀ and the group sums — each item computed entirely
 * by one thread with the serial loop_gemm_block, so the results are the same bits for any
 * thread count. Scratch is allocated once per call and thread.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fast-math.h"
#include "napi-args.h"
#include "sgemm.h"

static int n_threads = 1;

/* a parallel loop runs on all threads above this many multiply-adds of work */
#define PAR_MIN_WORK 200000.0

/* ---------------------------------------------------------------------------------------------
 * Argument checking
 * ------------------------------------------------------------------------------------------- */

/*
 * Float32Array argument i holding at least `need` elements. Optional arguments may be null or
 * undefined (→ NULL). NULL for an empty array. Throws (and sets *bad) on a wrong type or a short
 * array.
 */
static float *arg_f32(loop_args *a, size_t i, size_t need, int optional, const char *fn,
                      const char *what, int *bad) {
  if (*bad) return NULL;
  napi_valuetype t;
  napi_typeof(a->env, a->v[i], &t);
  if (t == napi_null || t == napi_undefined) {
    if (optional) return NULL;
  } else if (t == napi_object) {
    bool is = false;
    napi_is_typedarray(a->env, a->v[i], &is);
    if (is) {
      napi_typedarray_type type;
      size_t len = 0;
      void *data = NULL;
      napi_get_typedarray_info(a->env, a->v[i], &type, &len, &data, NULL, NULL);
      if (type == napi_float32_array) {
        if (len >= need) return len == 0 ? NULL : (float *)data;
        char msg[200];
        snprintf(msg, sizeof msg, "%s: %s holds %zu values, needs %zu", fn, what, len, need);
        napi_throw_range_error(a->env, NULL, msg);
        *bad = 1;
        return NULL;
      }
    }
  }
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s must be a Float32Array%s", fn, what, optional ? " or null" : "");
  napi_throw_type_error(a->env, NULL, msg);
  *bad = 1;
  return NULL;
}

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
 */
static void chunk_decays(const float *dt, long stride, float Ah, long L, double *restrict e,
                         double *restrict E, float *restrict dtc) {
  double acc = 1;
  for (long k = 0; k < L; k++) {
    float d = dt[k * stride];
    dtc[k] = d;
    double v = exp((double)d * (double)Ah);
    e[k] = v;
    acc *= v;
    E[k] = acc;
  }
}

/* serial C = alpha·op(A)·op(B) + beta·C (sgemm.h), M×N, inner size K */
static inline void gemm(int tA, int tB, long M, long N, long K, const float *A, long lda,
                        const float *B, long ldb, float beta, float *C, long ldc) {
  loop_gemm_block(tA, tB, 0, M, 0, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
}

/* zero L rows of n floats, leading dimension ld */
static void zero_rows(float *p, long L, long n, long ld) {
  for (long i = 0; i < L; i++) memset(p + i * ld, 0, (size_t)n * sizeof(float));
}

/* dst[c·rows + r] = src[r·cols + c]: a rows×cols block to cols×rows */
static void transpose(const float *restrict src, long rows, long cols, float *restrict dst) {
  for (long r = 0; r < rows; r++)
    for (long c = 0; c < cols; c++) dst[c * rows + r] = src[r * cols + c];
}

/* ---------------------------------------------------------------------------------------------
 * Forward (ssdChunkedForward: cbKernel, then scanKernel)
 * ------------------------------------------------------------------------------------------- */

/*
 * forward(x, dt, A, B, C, s0|null, y, state, cb, chunkStates|null, batch, T, H, P, G, N, Lc)
 * Per (b, c, g): cb = C·Bᵀ [L,L]. Per (b, h), chunks in order, with Sᵀ [N,P] the running
 * transposed state (s0ᵀ or zero to start), e, E the decays of the chunk:
 *   M_ij = cb_ij · exp(Λ_i − Λ_j) · dt_j (j ≤ i, else 0);  Y = M·X;  Y += diag(E)·C·Sᵀ
 *   Sᵀ ← E_{L−1}·Sᵀ + (diag(w)·B)ᵀ·X,  w_j = exp(Λ_{L−1} − Λ_j)·dt_j   (model.md §3.5)
 * chunkStates (when given) receives Sᵀ before each chunk, state the final S [B,H,P,N].
 * Shapes in the file header; y [B,T,H,P].
 */
static napi_value Forward(napi_env env, napi_callback_info info) {
  const char *fn = "ssd forward";
  loop_args a;
  if (!loop_get_args(env, info, &a, 17, fn)) return NULL;
  ssd_dims d;
  if (!arg_dims(&a, 10, fn, &d)) return NULL;
  if (d.nc == 0) return NULL;
  const long T = d.T, H = d.H, P = d.P, G = d.G, N = d.N, Lc = d.Lc, nc = d.nc;
  const long BT = d.batch * T, PN = P * N, LL = Lc * Lc, BH = d.batch * H;
  int bad = 0;
  const float *x = arg_f32(&a, 0, BT * H * P, 0, fn, "x", &bad);
  const float *dt = arg_f32(&a, 1, BT * H, 0, fn, "dt", &bad);
  const float *A = arg_f32(&a, 2, H, 0, fn, "A", &bad);
  const float *B = arg_f32(&a, 3, BT * G * N, 0, fn, "B", &bad);
  const float *C = arg_f32(&a, 4, BT * G * N, 0, fn, "C", &bad);
  const float *s0 = arg_f32(&a, 5, BH * PN, 1, fn, "s0", &bad);
  float *y = arg_f32(&a, 6, BT * H * P, 0, fn, "y", &bad);
  float *state = arg_f32(&a, 7, BH * PN, 0, fn, "state", &bad);
  float *cb = arg_f32(&a, 8, d.batch * nc * G * LL, 0, fn, "cb", &bad);
  float *cs = arg_f32(&a, 9, BH * nc * PN, 1, fn, "chunkStates", &bad);
  if (bad) return NULL;
  const long ldx = H * P, ldb = G * N, hpg = H / G;

  /* C·Bᵀ per (b, c, g) */
  const long ncb = d.batch * nc * G;
  const int t1 = threads_for(ncb, (double)ncb * Lc * Lc * N);
#pragma omp parallel for num_threads(t1) schedule(static)
  for (long item = 0; item < ncb; item++) {
    const long g = item % G, c = (item / G) % nc, b = item / (G * nc);
    const long t0 = c * Lc, L = T - t0 < Lc ? T - t0 : Lc;
    const long bc = ((b * T + t0) * G + g) * N;
    gemm(0, 1, L, L, N, C + bc, ldb, B + bc, ldb, 0.0f, cb + item * LL, Lc);
  }

  /* the chunk recurrence per (b, h) */
  const int t2 = threads_for(BH, (double)BH * T * (Lc * P + 2.0 * N * P));
#pragma omp parallel num_threads(t2)
  {
    float *st = malloc(sizeof(float) * (size_t)(PN + LL + 2 * Lc * N + Lc));
    double *dbl = malloc(sizeof(double) * (size_t)(3 * Lc));
    if (!st || !dbl) abort();
    float *M = st + PN, *W = M + LL, *Wb = W + Lc * N, *dtc = Wb + Lc * N;
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
        chunk_decays(dt + dtOff, H, A[h], L, e, E, dtc);
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
        gemm(0, 0, L, P, L, M, Lc, x + xOff, ldx, 0.0f, y + xOff, ldx);
        if (cs) memcpy(cs + (item * nc + c) * PN, st, sizeof(float) * (size_t)PN);
        if (!zeroPrev) {
          for (long i = 0; i < L; i++) {
            const double Ei = E[i];
            const float *restrict cr = C + bc + i * ldb;
            float *restrict wr = W + i * N;
            for (long n = 0; n < N; n++) wr[n] = (float)(Ei * (double)cr[n]);
          }
          gemm(0, 0, L, P, N, W, N, st, P, 1.0f, y + xOff, ldx);
        }
        /* Sᵀ ← E_{L−1}·Sᵀ + (diag(w)·B)ᵀ·X */
        double wdec = 1;
        for (long j = L - 1; j >= 0; j--) {
          const double w = wdec * (double)dtc[j];
          const float *restrict br = B + bc + j * ldb;
          float *restrict wr = Wb + j * N;
          for (long n = 0; n < N; n++) wr[n] = (float)(w * (double)br[n]);
          wdec *= e[j];
        }
        const double EL = E[L - 1];
        for (long k = 0; k < PN; k++) st[k] = (float)((double)st[k] * EL);
        gemm(1, 0, N, P, L, Wb, N, x + xOff, ldx, 1.0f, st, P);
      }
      transpose(st, N, P, state + item * PN);
    }
    free(st);
    free(dbl);
  }
  return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Backward (ssdChunkedBackward: headKernel, then groupKernel)
 * ------------------------------------------------------------------------------------------- */

/*
 * backwardHeads(x, dt, A, B, C, hasS0, gy|null, gState|null, chunkStates, cb, gx, gdt, gA,
 *               gs0|null, gBh, gCh, dCB|null, batch, T, H, P, G, N, Lc)
 * The reverse chunk recurrence per (b, h) (headKernel), carrying Rᵀ = (∂L/∂S_end)ᵀ [N,P]
 * (gStateᵀ or zero to start). Per chunk, last to first (model.md §3.5, ssd-chunked-backward.ts):
 *   dM = gY·Xᵀ;  d(CBᵀ)_ij = dM_ij·exp(Λ_i−Λ_j)·dt_j;  dX = Mᵀ·gY + diag(w)·B·Rᵀ
 *   gŶ = diag(E)·gY;  dC_h = gŶ·S_prev;  dB_h = diag(w)·X·R
 *   Rᵀ_prev = E_{L−1}·Rᵀ + Cᵀ·gŶ;  ∂Λ from every f·exp(Λ_i − Λ_j) term (float64), then
 *   ∂dt_k = ∂dt_k(direct) + A·Σ_{i≥k} ∂Λ_i,  ∂A = Σ_k dt_k·Σ_{i≥k} ∂Λ_i (summed over b in order).
 * Writes dx, ddt, dA [H], the initial-state gradient gs0 [B,H,P,N] (with hasS0), and for the
 * group pass the per-head partials gBh, gCh [B,T,H,N] and d(C·Bᵀ) dCB [B,nc,H,Lc,Lc] (with gy).
 */
static napi_value BackwardHeads(napi_env env, napi_callback_info info) {
  const char *fn = "ssd backwardHeads";
  loop_args a;
  if (!loop_get_args(env, info, &a, 24, fn)) return NULL;
  ssd_dims d;
  if (!arg_dims(&a, 17, fn, &d)) return NULL;
  if (d.nc == 0) return NULL;
  const long T = d.T, H = d.H, P = d.P, G = d.G, N = d.N, Lc = d.Lc, nc = d.nc;
  const long BT = d.batch * T, PN = P * N, LL = Lc * Lc, BH = d.batch * H;
  const int hasS0 = loop_bool(&a, 5);
  int bad = 0;
  const float *x = arg_f32(&a, 0, BT * H * P, 0, fn, "x", &bad);
  const float *dt = arg_f32(&a, 1, BT * H, 0, fn, "dt", &bad);
  const float *A = arg_f32(&a, 2, H, 0, fn, "A", &bad);
  const float *B = arg_f32(&a, 3, BT * G * N, 0, fn, "B", &bad);
  const float *C = arg_f32(&a, 4, BT * G * N, 0, fn, "C", &bad);
  const float *gy = arg_f32(&a, 6, BT * H * P, 1, fn, "gy", &bad);
  const float *gs = arg_f32(&a, 7, BH * PN, 1, fn, "gState", &bad);
  const float *cs = arg_f32(&a, 8, BH * nc * PN, 0, fn, "chunkStates", &bad);
  const float *cb = arg_f32(&a, 9, d.batch * nc * G * LL, 0, fn, "cb", &bad);
  float *gx = arg_f32(&a, 10, BT * H * P, 0, fn, "gx", &bad);
  float *gdt = arg_f32(&a, 11, BT * H, 0, fn, "gdt", &bad);
  float *gA = arg_f32(&a, 12, H, 0, fn, "gA", &bad);
  float *gs0 = arg_f32(&a, 13, BH * PN, 1, fn, "gs0", &bad);
  float *gBh = arg_f32(&a, 14, BT * H * N, 0, fn, "gBh", &bad);
  float *gCh = arg_f32(&a, 15, BT * H * N, 0, fn, "gCh", &bad);
  float *dCB = arg_f32(&a, 16, gy ? d.batch * nc * H * LL : 0, 1, fn, "dCB", &bad);
  if (!bad && gy && !dCB) {
    napi_throw_type_error(env, NULL, "ssd backwardHeads: dCB is needed with gy");
    return NULL;
  }
  if (bad) return NULL;
  const long ldx = H * P, ldb = G * N, ldh = H * N, hpg = H / G;
  double *gAh = malloc(sizeof(double) * (size_t)BH);
  if (!gAh) abort();

  const int nt = threads_for(BH, (double)BH * T * (2.0 * Lc * P + 5.0 * N * P));
#pragma omp parallel num_threads(nt)
  {
    float *rt = malloc(sizeof(float) * (size_t)(PN + 2 * LL + 2 * Lc * P + Lc));
    double *dbl = malloc(sizeof(double) * (size_t)(5 * Lc));
    if (!rt || !dbl) abort();
    float *M = rt + PN, *dM = M + LL, *gYs = dM + LL, *tmp = gYs + Lc * P, *dtc = tmp + Lc * P;
    double *e = dbl, *E = e + Lc, *dec = E + Lc, *dAc = dec + Lc, *ddt = dAc + Lc;
#pragma omp for schedule(static)
    for (long item = 0; item < BH; item++) {
      const long h = item % H, b = item / H, g = h / hpg;
      const float Ah = A[h];
      if (gs)
        transpose(gs + item * PN, P, N, rt);
      else
        memset(rt, 0, sizeof(float) * (size_t)PN);
      int zeroR = !gs; /* R still exactly zero: no final-state gradient, nothing propagated */
      double gAsum = 0;
      for (long c = nc - 1; c >= 0; c--) {
        const long t0 = c * Lc, L = T - t0 < Lc ? T - t0 : Lc;
        const int zeroPrev = !hasS0 && c == 0;
        const long bc = ((b * T + t0) * G + g) * N;
        const long hOff = ((b * T + t0) * H + h) * N;
        const float *cbk = cb + ((b * nc + c) * G + g) * LL;
        float *dcb = dCB ? dCB + ((b * nc + c) * H + h) * LL : NULL;
        const long dtOff = (b * T + t0) * H + h, xOff = ((b * T + t0) * H + h) * P;
        const float *sPrev = cs + (item * nc + c) * PN;
        chunk_decays(dt + dtOff, H, Ah, L, e, E, dtc);
        memset(dAc, 0, sizeof(double) * (size_t)L);
        memset(ddt, 0, sizeof(double) * (size_t)L);
        int wroteC = 0;
        if (gy) {
          /* intra-chunk block: dM = gY·Xᵀ; M rebuilt row by row for dX = Mᵀ·gY */
          gemm(0, 1, L, L, P, gy + xOff, ldx, x + xOff, ldx, 0.0f, dM, Lc);
          for (long i = 0; i < L; i++) {
            const double ei = e[i];
            const float *restrict cbr = cbk + i * Lc;
            const float *restrict dMr = dM + i * Lc;
            float *restrict Mr = M + i * Lc;
            float *restrict dcr = dcb + i * Lc;
            double *restrict dc = dec, *restrict dd = ddt, *restrict da = dAc;
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
            for (long j = i + 1; j < L; j++) {
              Mr[j] = 0.0f;
              dcr[j] = 0.0f;
            }
            da[i] += dAi;
          }
          gemm(1, 0, L, P, L, M, Lc, gy + xOff, ldx, 0.0f, gx + xOff, ldx);
          /* state → output: gŶ = diag(E)·gY */
          for (long i = 0; i < L; i++) {
            const double Ei = E[i];
            const float *restrict gr = gy + xOff + i * ldx;
            float *restrict sr = gYs + i * P;
            for (long p = 0; p < P; p++) sr[p] = (float)(Ei * (double)gr[p]);
          }
          if (!zeroPrev) {
            /* ∂Λ_i += gŶ_i·(S_prev·C_i);  dC_h = gŶ·S_prev */
            gemm(0, 0, L, P, N, C + bc, ldb, sPrev, P, 0.0f, tmp, P);
            for (long i = 0; i < L; i++) {
              const float *restrict sr = gYs + i * P, *restrict tr = tmp + i * P;
              double s = 0;
#pragma omp simd reduction(+ : s)
              for (long p = 0; p < P; p++) s += (double)sr[p] * (double)tr[p];
              dAc[i] += s;
            }
            gemm(0, 1, L, N, P, gYs, P, sPrev, P, 0.0f, gCh + hOff, ldh);
            wroteC = 1;
          }
        }
        if (!wroteC) zero_rows(gCh + hOff, L, N, ldh);
        /* chunk-state path, through R = ∂L/∂S_end */
        const double EL = E[L - 1];
        if (!zeroR) {
          /* RB = B·Rᵀ [L,P]: dX_j += w_j·RB_j, ∂w_j = x_j·RB_j; then dB_h = diag(w)·X·R */
          gemm(0, 0, L, P, N, B + bc, ldb, rt, P, 0.0f, tmp, P);
          double dAL = 0, wdec = 1;
          for (long j = L - 1; j >= 0; j--) {
            const double w = wdec * (double)dtc[j];
            const float *restrict xr = x + xOff + j * ldx;
            float *restrict gr = gx + xOff + j * ldx;
            float *restrict tr = tmp + j * P;
            double dw = 0;
#pragma omp simd reduction(+ : dw)
            for (long p = 0; p < P; p++) {
              const double rb = tr[p], xv = xr[p];
              dw += xv * rb;
              gr[p] = (float)((double)gr[p] + w * rb);
              tr[p] = (float)(w * xv);
            }
            ddt[j] += dw * wdec;
            const double dseg = dw * w;
            dAL += dseg;
            dAc[j] -= dseg;
            wdec *= e[j];
          }
          gemm(0, 1, L, N, P, tmp, P, rt, P, 0.0f, gBh + hOff, ldh);
          if (!zeroPrev) {
            double dot = 0;
#pragma omp simd reduction(+ : dot)
            for (long k = 0; k < PN; k++) dot += (double)rt[k] * (double)sPrev[k];
            dAL += EL * dot;
          }
          dAc[L - 1] += dAL;
        } else {
          zero_rows(gBh + hOff, L, N, ldh);
        }
        /* Rᵀ_prev = E_{L−1}·Rᵀ + Cᵀ·gŶ (not needed before the first chunk without s0) */
        if (!zeroPrev || hasS0) {
          for (long k = 0; k < PN; k++) rt[k] = (float)((double)rt[k] * EL);
          if (gy) gemm(1, 0, N, P, L, C + bc, ldb, gYs, P, 1.0f, rt, P);
        }
        /* Λ → a = dt·A → (dt, A) */
        double da = 0;
        for (long k = L - 1; k >= 0; k--) {
          da += dAc[k];
          gdt[dtOff + k * H] = (float)(ddt[k] + da * (double)Ah);
          gAsum += da * (double)dtc[k];
        }
        if (gy) zeroR = 0;
      }
      gAh[item] = gAsum;
      if (gs0) transpose(rt, N, P, gs0 + item * PN);
    }
    free(rt);
    free(dbl);
  }
  for (long h = 0; h < H; h++) {
    double v = 0;
    for (long b = 0; b < d.batch; b++) v += gAh[b * H + h];
    gA[h] = (float)v;
  }
  free(gAh);
  return NULL;
}

/*
 * backwardGroups(B, C, gBh, gCh, dCB|null, gB, gC, batch, T, H, P, G, N, Lc)
 * Per (b, c, g) (groupKernel): the sums over the group's heads and the two d(C·Bᵀ) products,
 *   dC = Σ_h gC_h + (Σ_h d(CBᵀ)_h)·B,   dB = Σ_h gB_h + (Σ_h d(CBᵀ)_h)ᵀ·C   (model.md §3.5)
 * gBh, gCh [B,T,H,N] and dCB [B,nc,H,Lc,Lc] from backwardHeads; gB, gC [B,T,G,N].
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
  const float *B = arg_f32(&a, 0, BT * G * N, 0, fn, "B", &bad);
  const float *C = arg_f32(&a, 1, BT * G * N, 0, fn, "C", &bad);
  const float *gBh = arg_f32(&a, 2, BT * H * N, 0, fn, "gBh", &bad);
  const float *gCh = arg_f32(&a, 3, BT * H * N, 0, fn, "gCh", &bad);
  const float *dCB = arg_f32(&a, 4, d.batch * nc * H * LL, 1, fn, "dCB", &bad);
  float *gB = arg_f32(&a, 5, BT * G * N, 0, fn, "gB", &bad);
  float *gC = arg_f32(&a, 6, BT * G * N, 0, fn, "gC", &bad);
  if (bad) return NULL;
  const long ldb = G * N, hpg = H / G;
  const long items = d.batch * nc * G;
  const int nt = threads_for(items, (double)items * Lc * (hpg * (N + (dCB ? Lc : 0)) + 2.0 * Lc * N));
#pragma omp parallel num_threads(nt)
  {
    float *sum = malloc(sizeof(float) * (size_t)LL);
    double *acc = malloc(sizeof(double) * (size_t)(2 * N));
    if (!sum || !acc) abort();
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
      const float *base = dCB + ((b * nc + c) * H + g * hpg) * LL;
      for (long i = 0; i < L; i++) memcpy(sum + i * Lc, base + i * Lc, sizeof(float) * (size_t)L);
      for (long hh = 1; hh < hpg; hh++)
        for (long i = 0; i < L; i++) {
          const float *restrict s = base + hh * LL + i * Lc;
          float *restrict r = sum + i * Lc;
          for (long j = 0; j < L; j++) r[j] += s[j];
        }
      gemm(0, 0, L, N, L, sum, Lc, B + bc, ldb, 1.0f, gC + bc, ldb);
      gemm(1, 0, L, N, L, sum, Lc, C + bc, ldb, 1.0f, gB + bc, ldb);
    }
    free(sum);
    free(acc);
  }
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
  loop_export(env, exports, "forward", Forward);
  loop_export(env, exports, "backwardHeads", BackwardHeads);
  loop_export(env, exports, "backwardGroups", BackwardGroups);
  loop_export(env, exports, "setThreads", SetThreads);
  return exports;
}
