/*
 * Single-precision GEMM shared by the native addons of looplm (included, not linked: every
 * addon is one translation unit).
 *   C = alpha · op(A) · op(B) + beta · C, row-major, the GemmFn contract of
 *   @loop/tensor src/kernels/gemm.ts (beta = 0: C is not read).
 * Goto/BLIS structure: B packed into NR-column panels per (jc, pc) block, A into MR-row panels
 * per (ic, pc) block (AVX-512: panels whose source runs along k are transposed 16×16 in
 * registers; a scalar scatter costs a fifth of the whole GEMM when N is a few hundred), an MR×NR register tile in GCC vector extensions (AVX-512: 12×32 in 24 zmm
 * accumulators; AVX2: 6×16), mul+add contracted to FMA. Threads take disjoint blocks of C (rows
 * when M is the longer side, else columns), so every element of C is computed by the same
 * arithmetic whatever the thread count: results do not depend on it.
 * A few rows against B stored as rows (M ≤ LOOP_GEMV_MAX_M, op(B) = Bᵀ: a linear layer's weight
 * [N, K] in decoding, the LM head) take gemv.h's dot products instead: packing B would cost more
 * than the product. Threads take blocks of eight columns of C there.
 */
#ifndef LOOP_SGEMM_H
#define LOOP_SGEMM_H
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "gemv.h"
#include "thread-buffer.h"
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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
#define NC 2048
/* the most rows of A that take gemv.h's path (op(B) = Bᵀ) */
#define LOOP_GEMV_MAX_M 8

typedef float vf __attribute__((vector_size(VW * 4), aligned(4)));

#if defined(__AVX512F__)
/* 16×16 transpose of r[0..15] in place (r[i] lane j ← r[j] lane i) */
static inline void loop_transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
  }
  for (int i = 0; i < 4; i++) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 4; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xdd);
  }
}

/* one 16×16 block: dst[c·ldd + r] = src[r·lds + c] */
static inline void loop_transpose16_ld(const float *src, long lds, float *dst, long ldd) {
  __m512 r[16];
  for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * lds);
  loop_transpose16(r);
  for (int i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ldd, r[i]);
}
#endif

/* acc = Σ_k a[k·MR + i] · b[k·NR + j]; C tile = alpha·acc + beta·C (beta == 0: C not read) */
static void tile(int kc, const float *a, const float *b, float *c, long ldc, float alpha,
                 float beta, int mr, int nr) {
  vf acc[MR][2];
  const vf zero = {0};
#pragma GCC unroll 16
  for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = zero; /* (a memset call otherwise) */
  for (int k = 0; k < kc; k++) {
    vf b0 = *(const vf *)b, b1 = *(const vf *)(b + VW);
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++) {
      vf ai = a[i] - (vf){0}; /* a broadcast (x − 0 = x exactly, so no add is emitted; 0 + x is not −0-safe) */
      acc[i][0] += ai * b0;
      acc[i][1] += ai * b1;
    }
    a += MR;
    b += NR;
  }
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; i++) {
      vf *c0 = (vf *)(c + i * ldc), *c1 = (vf *)(c + i * ldc + VW);
      if (beta == 0.0f) {
        *c0 = acc[i][0] * alpha;
        *c1 = acc[i][1] * alpha;
      } else {
        *c0 = acc[i][0] * alpha + *c0 * beta;
        *c1 = acc[i][1] * alpha + *c1 * beta;
      }
    }
    return;
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

/*
 * Packing reads the source along its contiguous axis and scatters into the small panel (which
 * stays in L1): op(B) columns are rows of B when transposed, op(A) rows are rows of A when not.
 */
/* panel of nr ≤ NR columns of op(B) from column j0, rows pc..pc+kc, k-major, zero-padded */
static inline void pack_b_panel(int tB, const float *B, long ldb, long pc, int kc, long j0, int nr,
                                float *restrict dst) {
  if (!tB) {
    for (int k = 0; k < kc; k++) {
      const float *src = B + (pc + k) * ldb + j0;
      if (nr == NR) {
        memcpy(dst + k * NR, src, NR * sizeof(float));
      } else {
        for (int j = 0; j < nr; j++) dst[k * NR + j] = src[j];
        for (int j = nr; j < NR; j++) dst[k * NR + j] = 0.0f;
      }
    }
    return;
  }
  int k0 = 0;
#if defined(__AVX512F__) && NR == 32
  if (nr == NR) { /* 16×16 blocks transposed in registers */
    for (; k0 + 16 <= kc; k0 += 16)
      for (int h = 0; h < 2; h++)
        loop_transpose16_ld(B + (j0 + 16 * h) * ldb + pc + k0, ldb, dst + k0 * NR + 16 * h, NR);
  }
#endif
  for (int j = 0; j < NR; j++) {
    if (j < nr) {
      const float *src = B + (j0 + j) * ldb + pc; /* op(B)[pc + k, j0 + j] = B[j0 + j, pc + k] */
      for (int k = k0; k < kc; k++) dst[k * NR + j] = src[k];
    } else {
      for (int k = k0; k < kc; k++) dst[k * NR + j] = 0.0f;
    }
  }
}

/* panel of mr ≤ MR rows of op(A) from row i0, columns pc..pc+kc, k-major, zero-padded */
static inline void pack_a_panel(int tA, const float *A, long lda, long i0, int mr, long pc, int kc,
                                float *restrict dst) {
  if (tA) {
    for (int k = 0; k < kc; k++) {
      const float *src = A + (pc + k) * lda + i0; /* op(A)[i0 + i, pc + k] = A[pc + k, i0 + i] */
      if (mr == MR) {
        memcpy(dst + k * MR, src, MR * sizeof(float));
      } else {
        for (int i = 0; i < MR; i++) dst[k * MR + i] = i < mr ? src[i] : 0.0f;
      }
    }
    return;
  }
  int k0 = 0;
#if defined(__AVX512F__) && MR <= 16
  if (mr == MR) {
    const float *rows[MR];
    for (int i = 0; i < MR; i++) rows[i] = A + (i0 + i) * lda + pc;
    for (; k0 + 16 <= kc; k0 += 16) {
      __m512 r[16];
      for (int i = 0; i < MR; i++) r[i] = _mm512_loadu_ps(rows[i] + k0);
      for (int i = MR; i < 16; i++) r[i] = _mm512_setzero_ps();
      loop_transpose16(r);
      for (int k = 0; k < 16; k++) _mm512_mask_storeu_ps(dst + (k0 + k) * MR, (1 << MR) - 1, r[k]);
    }
  }
#endif
  for (int i = 0; i < MR; i++) {
    if (i < mr) {
      const float *src = A + (i0 + i) * lda + pc;
      for (int k = k0; k < kc; k++) dst[k * MR + i] = src[k];
    } else {
      for (int k = k0; k < kc; k++) dst[k * MR + i] = 0.0f;
    }
  }
}

/* per-thread packing buffers, grown on demand and kept (OpenMP threads persist) */
static __thread float *pack_a, *pack_b;
static __thread size_t cap_a, cap_b; /* bytes */

static float *grow(float **buf, size_t *cap, size_t n) {
  return loop_grow((void **)buf, cap, n * sizeof(float));
}

/* rows pc..pc+kc, columns jc..jc+nc of op(B) as NR-column panels, k-major, at dst */
static inline void pack_b_slab(int tB, const float *B, long ldb, long pc, int kc, long jc, long nc,
                               float *restrict dst) {
  for (long jr = 0; jr < nc; jr += NR)
    pack_b_panel(tB, B, ldb, pc, kc, jc + jr, nc - jr < NR ? (int)(nc - jr) : NR, dst + jr * kc);
}

/* one MC block of C's rows from row ic against a packed slab bp of nc columns: pack op(A) rows
 * ic..ic+mc, columns pc..pc+kc into ap, then every register tile; C points at C(ic, jc) */
static inline void gemm_row_block(int tA, const float *A, long lda, long ic, long mc, long pc,
                                  int kc, float *restrict ap, const float *bp, long nc,
                                  float *C, long ldc, float alpha, float beta) {
  for (long ir = 0; ir < mc; ir += MR) /* pack A: panel of MR rows, k-major */
    pack_a_panel(tA, A, lda, ic + ir, mc - ir < MR ? (int)(mc - ir) : MR, pc, kc, ap + ir * kc);
  for (long jr = 0; jr < nc; jr += NR)
    for (long ir = 0; ir < mc; ir += MR)
      tile(kc, ap + ir * kc, bp + jr * kc, C + ir * ldc + jr, ldc, alpha, beta,
           mc - ir < MR ? (int)(mc - ir) : MR, nc - jr < NR ? (int)(nc - jr) : NR);
}

/* one thread: rows [i0, i1) and columns [j0, j1) of C; (0, M, 0, N) is a serial sgemm */
static void loop_gemm_block(int tA, int tB, long i0, long i1, long j0, long j1, long K, float alpha,
                       const float *A, long lda, const float *B, long ldb, float beta, float *C,
                       long ldc) {
  long N = j1 - j0;
  long kcMax = K < KC ? K : KC;
  long ncMax = N < NC ? N : NC;
  float *bp = grow(&pack_b, &cap_b, (size_t)kcMax * (size_t)((ncMax + NR - 1) / NR * NR));
  float *ap = grow(&pack_a, &cap_a, (size_t)kcMax * MC);
  for (long jc = j0; jc < j1; jc += NC) {
    long nc = j1 - jc < NC ? j1 - jc : NC;
    for (long pc = 0; pc < K; pc += KC) {
      int kc = K - pc < KC ? (int)(K - pc) : KC;
      float bet = pc == 0 ? beta : 1.0f;
      pack_b_slab(tB, B, ldb, pc, kc, jc, nc, bp);
      for (long ic = i0; ic < i1; ic += MC)
        gemm_row_block(tA, A, lda, ic, i1 - ic < MC ? i1 - ic : MC, pc, kc, ap, bp, nc,
                       C + ic * ldc + jc, ldc, alpha, bet);
    }
  }
}

/* thread t of nt: its share of C, the longer side split into parts aligned to the register tile */
static void loop_gemm_share(int t, int nt, int tA, int tB, long M, long N, long K, float alpha,
                            const float *A, long lda, const float *B, long ldb, float beta,
                            float *C, long ldc) {
  int byRows = (double)M / MR >= (double)N / NR;
  long unit = byRows ? MR : NR, len = byRows ? M : N;
  long units = (len + unit - 1) / unit;
  long u0 = units * t / nt, u1 = units * (t + 1) / nt;
  long s0 = u0 * unit, s1 = u1 * unit < len ? u1 * unit : len;
  if (s0 >= s1) return;
  if (byRows)
    loop_gemm_block(tA, tB, s0, s1, 0, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else
    loop_gemm_block(tA, tB, 0, M, s0, s1, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/*
 * Rows of C in blocks of MC handed out as threads free up, for tall products whose packed op(B)
 * is small (activations × weights): a thread slowed by other load on the machine takes fewer
 * blocks instead of holding the other at the closing barrier. Each thread packs the whole of
 * op(B) once; a block then runs all of K in order, the arithmetic of loop_gemm_block, so an
 * element's bits do not depend on which thread computes it.
 */
static int loop_gemm_rows_dynamic(long M, long N, long K) {
  long nPad = (N + NR - 1) / NR * NR;
  return (double)M / MR >= (double)N / NR && M >= 4 * MC && N <= NC &&
         (double)K * (double)nPad <= 262144.0;
}

static void loop_gemm_rows_dynamic_run(int tA, int tB, long M, long N, long K, float alpha,
                                       const float *A, long lda, const float *B, long ldb,
                                       float beta, float *C, long ldc) {
  long nPad = (N + NR - 1) / NR * NR, blocks = (M + MC - 1) / MC;
  float *bp = grow(&pack_b, &cap_b, (size_t)K * (size_t)nPad);
  float *ap = grow(&pack_a, &cap_a, (size_t)(K < KC ? K : KC) * MC);
  /* op(B) as KC-row slabs: slab pc starts at bp + pc·nPad */
  for (long pc = 0; pc < K; pc += KC)
    pack_b_slab(tB, B, ldb, pc, K - pc < KC ? (int)(K - pc) : KC, 0, N, bp + pc * nPad);
#pragma omp for schedule(dynamic, 1) nowait
  for (long blk = 0; blk < blocks; blk++) {
    long ic = blk * MC, mc = M - ic < MC ? M - ic : MC;
    for (long pc = 0; pc < K; pc += KC)
      gemm_row_block(tA, A, lda, ic, mc, pc, K - pc < KC ? (int)(K - pc) : KC, ap,
                     bp + pc * nPad, N, C + ic * ldc, ldc, alpha, pc == 0 ? beta : 1.0f);
  }
}

/*
 * Long K against a small C (weight gradients: K = tokens): every thread would pack the whole
 * of the operand it does not split, so K is cut in two halves at a KC boundary instead — the
 * first half accumulates into C, the second into a scratch C', then C += C'. The cut depends on
 * the shape alone (never on the thread count), so results stay thread-count independent.
 */
static int loop_gemm_ksplit(long M, long N, long K) {
  return K >= 2048 && (double)M * (double)N <= 524288.0;
}

/* C = alpha·op(A)·op(B) + beta·C on up to `max_threads` OpenMP threads (1 for small products) */
static inline void loop_sgemm(int tA, int tB, long M, long N, long K, float alpha,
                              const float *A, long lda, const float *B, long ldb, float beta,
                              float *C, long ldc, int max_threads) {
  if (K == 0) {
    for (long i = 0; i < M; i++)
      for (long j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  double work = (double)M * (double)N * (double)K;
  int threads = work < 4.0e5 ? 1 : max_threads;
  if (M <= LOOP_GEMV_MAX_M && tB && !tA) {
    const long blocks = (N + 7) / 8;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (long b = 0; b < blocks; b++)
      loop_gemv_rows(B, ldb, K, 8 * b, 8 * b + 8 < N ? 8 * b + 8 : N, A, lda, M, alpha, beta, C,
                     ldc);
    return;
  }
  if (loop_gemm_ksplit(M, N, K)) {
    long K0 = (K / 2 + KC - 1) / KC * KC;
    const float *A1 = tA ? A + K0 * lda : A + K0, *B1 = tB ? B + K0 : B + K0 * ldb;
    LOOP_KEPT(ksplit_c);
    float *C1 = loop_grow(&ksplit_c, &ksplit_c_cap, (size_t)(M * N) * sizeof(float));
#pragma omp parallel num_threads(threads)
    {
      /* the first ⌈nt/2⌉ threads take the first half of K, the others the second */
      int t = omp_get_thread_num(), nt = omp_get_num_threads(), n0 = (nt + 1) / 2;
      if (nt == 1) {
        loop_gemm_block(tA, tB, 0, M, 0, N, K0, alpha, A, lda, B, ldb, beta, C, ldc);
        loop_gemm_block(tA, tB, 0, M, 0, N, K - K0, alpha, A1, lda, B1, ldb, 0.0f, C1, N);
      } else if (t < n0) {
        loop_gemm_share(t, n0, tA, tB, M, N, K0, alpha, A, lda, B, ldb, beta, C, ldc);
      } else {
        loop_gemm_share(t - n0, nt - n0, tA, tB, M, N, K - K0, alpha, A1, lda, B1, ldb, 0.0f, C1, N);
      }
#pragma omp barrier
#pragma omp for schedule(static)
      for (long i = 0; i < M; i++) {
        float *restrict c = C + i * ldc;
        const float *restrict c1 = C1 + i * N;
        for (long j = 0; j < N; j++) c[j] += c1[j];
      }
    }
    return;
  }
  if (threads <= 1) {
    loop_gemm_block(tA, tB, 0, M, 0, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  if (loop_gemm_rows_dynamic(M, N, K)) {
#pragma omp parallel num_threads(threads)
    loop_gemm_rows_dynamic_run(tA, tB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  /* at most one part per register-tile row or column */
  long units = (double)M / MR >= (double)N / NR ? (M + MR - 1) / MR : (N + NR - 1) / NR;
  if (units < threads) threads = (int)units;
#pragma omp parallel num_threads(threads)
  loop_gemm_share(omp_get_thread_num(), omp_get_num_threads(), tA, tB, M, N, K, alpha, A, lda, B,
                  ldb, beta, C, ldc);
}

#endif
