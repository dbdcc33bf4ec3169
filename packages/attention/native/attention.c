/*
 * Native kernels of @loop/attention (RoPE, causal GQA attention forward and backward, SwiGLU),
 * compiled from source on the user's machine by src/node/index.ts through @loop/tensor/node
 * `buildNativeAddon`; never downloaded, never required. Each function is the C twin of the
 * portable raw-array kernel named beside it and is tested against it
 * (src/node/native-attention.test.ts).
 *
 * Threads: every output element is computed by one thread with the same arithmetic whatever
 * the thread count (work is split into units that own disjoint outputs), so results do not
 * depend on the number of threads.
 */
#include <math.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "fast-math.h"
#include "addon-threads.h"
#include "napi-args.h"
#include "sgemm.h"

/* elementwise loops run on all threads above this many elements */
#define PAR_MIN 32768

/* a row stride argument: 0 means rows of `min` floats (packed), else at least `min` */
static long row_stride(loop_args *a, size_t i, long min) {
  long ld = loop_long(a, i);
  return ld == 0 ? min : ld < min ? -1 : ld;
}

/*
 * rope(src, dst, B, T, H, hd, cos, sin, sign, ld) — rope.ts `rotate` (docs/model.md §4, rotate-half):
 *   src, dst [B, T, H, hd] float32 (dst may be src), positions ld floats apart in both (0:
 *   packed, H·hd), cos, sin [T, hd/2] float64 (ropeTables),
 *   sign = +1 (forward, angle +a) or −1 (backward, angle −a); pair i < hd/2, s = sign·sin:
 *     dst[i] = src[i]·cos − src[i + hd/2]·s,  dst[i + hd/2] = src[i + hd/2]·cos + src[i]·s
 *   computed in float64 and rounded to float32, as the portable loop does.
 */
static napi_value Rope(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 10, "rope")) return NULL;
  const float *src = loop_f32(&a, 0);
  float *dst = loop_f32(&a, 1);
  long B = loop_long(&a, 2), T = loop_long(&a, 3), H = loop_long(&a, 4), hd = loop_long(&a, 5);
  const double *cs = loop_f64(&a, 6), *sn = loop_f64(&a, 7);
  double sign = loop_num(&a, 8) < 0 ? -1.0 : 1.0;
  long rows = B * T, half = hd / 2, ld = row_stride(&a, 9, H * hd);
  if (rows <= 0 || H <= 0 || half <= 0) return NULL;
  if (!src || !dst || !cs || !sn || ld < 0) {
    napi_throw_type_error(env, NULL, "rope: src, dst must be Float32Arrays, cos, sin Float64");
    return NULL;
  }
  int nt = rows * H * hd >= PAR_MIN ? n_threads : 1;
  /* one head's row is copied first (per thread), so dst may alias src */
  LOOP_KEPT(rope_buf);
  float *buf = loop_keep(&rope_buf, &rope_buf_cap, (size_t)(nt * hd) * sizeof(float));
  if (!buf) {
    napi_throw_error(env, NULL, "rope: out of memory");
    return NULL;
  }
#pragma omp parallel num_threads(nt)
  {
    float *xr = buf + omp_get_thread_num() * hd;
#pragma omp for schedule(static)
    for (long row = 0; row < rows; row++) {
      long t = row % T;
      const double *restrict c = cs + t * half, *restrict s = sn + t * half;
      for (long h = 0; h < H; h++) {
        long o = row * ld + h * hd;
        memcpy(xr, src + o, (size_t)hd * sizeof(float));
        const float *restrict x1 = xr, *restrict x2 = xr + half;
        float *restrict y1 = dst + o, *restrict y2 = dst + o + half;
        for (long i = 0; i < half; i++) {
          double ci = c[i], si = sign * s[i];
          y1[i] = (float)((double)x1[i] * ci - (double)x2[i] * si);
          y2[i] = (float)((double)x2[i] * ci + (double)x1[i] * si);
        }
      }
    }
  }
  return NULL;
}

/* dst[0..n) = src[0..n) inline: a libc call per head row (n = hd) costs more than the copy */
static inline void copy_row(float *restrict dst, const float *restrict src, long n) {
  long i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_loadu_ps(src + i));
#endif
  for (; i < n; i++) dst[i] = src[i];
}

/* rows R = jj·br + r of a query tile of one head group into dst [G·br, hd] (attention-pack.ts) */
static void pack_group(const float *src, long base, long ld, long r0, long br, long G, long hd,
                       float *restrict dst) {
  for (long jj = 0; jj < G; jj++)
    for (long r = 0; r < br; r++)
      copy_row(dst + (jj * br + r) * hd, src + base + (r0 + r) * ld + jj * hd, hd);
}

/*
 * Tile products on operands packed once and reused, with the register tile `tile` of sgemm.h
 * (MR×NR, FMA, k in order: the arithmetic of loop_gemm_block for K ≤ 256).
 *   A panels: op(A) [M, K] as ceil(M/MR) panels of MR rows, k-major: dst[p·MR·K + k·MR + i];
 *   B panels: op(B) [K, N] as ceil(N/NR) panels of NR columns, k-major: dst[p·NR·K + k·NR + j];
 *   rows / columns past M / N are zero. op(X) = X, or Xᵀ when trans. The panels are sgemm.h's
 *   (pack_a_panel / pack_b_panel with the whole K as one block).
 */
static long panels_a(long M, long K) { return (M + MR - 1) / MR * MR * K; }
static long panels_b(long K, long N) { return (N + NR - 1) / NR * NR * K; }

static void pack_apanels(const float *A, long lda, int trans, long M, long K, float *restrict dst) {
  for (long ir = 0; ir < M; ir += MR, dst += MR * K)
    pack_a_panel(trans, A, lda, ir, M - ir < MR ? (int)(M - ir) : MR, 0, (int)K, dst);
}

static void pack_bpanels(const float *B, long ldb, int trans, long K, long N, float *restrict dst) {
  for (long jr = 0; jr < N; jr += NR, dst += NR * K)
    pack_b_panel(trans, B, ldb, 0, (int)K, jr, N - jr < NR ? (int)(N - jr) : NR, dst);
}

/*
 * Causal masking skips work that only multiplies zeros. A query tile holds rows R = jj·br + r
 * at position r0 + r (jj < G); a key tile holds columns at positions c0 + col. The results are
 * the same bits as the full products: a masked score is never read (the softmax loops stop at
 * the last visible key and zero the rest), and a skipped k term only ever added a zero.
 */
/* the last query position among rows [ir, ir + mr) of a tile of br rows per head from r0 */
static long panel_last_pos(long ir, long mr, long br, long r0) {
  long last = ir + mr - 1;
  return ir / br == last / br ? r0 + last % br : r0 + br - 1;
}

/* S [rows, bc] = alpha·Q·Kᵀ, register tiles wholly right of the diagonal left unwritten */
static void gemm_scores(long rows, long bc, long hd, float alpha, const float *ap,
                        const float *bp, float *S, long br, long r0, long c0) {
  for (long jr = 0; jr < bc; jr += NR)
    for (long ir = 0; ir < rows; ir += MR) {
      int mr = rows - ir < MR ? (int)(rows - ir) : MR;
      if (c0 + jr > panel_last_pos(ir, mr, br, r0)) continue;
      tile((int)hd, ap + ir * hd, bp + jr * hd, S + ir * bc + jr, bc, alpha, 0.0f, mr,
           bc - jr < NR ? (int)(bc - jr) : NR);
    }
}

/* C [rows, N] += alpha·P·X for P [rows, bc] masked (P·V, dS·K): each row panel stops at its
 * last visible key */
static void gemm_rows_causal(long rows, long N, long bc, float alpha, const float *ap,
                             const float *bp, float *C, long ldc, long br, long r0, long c0) {
  for (long ir = 0; ir < rows; ir += MR) {
    int mr = rows - ir < MR ? (int)(rows - ir) : MR;
    long kEnd = panel_last_pos(ir, mr, br, r0) - c0 + 1;
    if (kEnd > bc) kEnd = bc;
    if (kEnd <= 0) continue;
    for (long jr = 0; jr < N; jr += NR)
      tile((int)kEnd, ap + ir * bc, bp + jr * bc, C + ir * ldc + jr, ldc, alpha, 1.0f, mr,
           N - jr < NR ? (int)(N - jr) : NR);
  }
}

/* C [bc, N] = alpha·Pᵀ·X + beta·C for P [rows, bc] masked (Pᵀ·gy, dSᵀ·Q): key panel at
 * c0 + ir starts at the first row that sees it (row R = key − r0 of head 0 is the first of any
 * head) */
static void gemm_keys_causal(long bc, long N, long rows, float alpha, const float *ap,
                             const float *bp, float beta, float *C, long ldc, long r0, long c0) {
  for (long ir = 0; ir < bc; ir += MR) {
    int mr = bc - ir < MR ? (int)(bc - ir) : MR;
    long k0 = c0 + ir - r0;
    if (k0 < 0) k0 = 0;
    if (k0 >= rows) continue;
    for (long jr = 0; jr < N; jr += NR)
      tile((int)(rows - k0), ap + ir * rows + k0 * MR, bp + jr * rows + k0 * NR, C + ir * ldc + jr,
           ldc, alpha, beta, mr, N - jr < NR ? (int)(N - jr) : NR);
  }
}

/* colf[i] = i for i < n: the row loops mask with `colf[col] < nValid`, a test on data, because
 * GCC splits a loop on a test of its counter into a vector part and a scalar tail */
static void column_numbers(float *colf, long n) {
  for (long i = 0; i < n; i++) colf[i] = (float)i;
}

/*
 * Max and sum of a score row's visible columns (from ≤ colf[col] < lim). The lanes are combined as a
 * tree at the end: the vectorised `omp simd reduction` of GCC ends in a chain of 16 dependent
 * scalar adds per row and key tile, which cost a tenth of the forward.
 */
#if defined(__AVX512F__)
static inline __mmask16 row_lanes(long col, long n) {
  return n - col >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - col)) - 1);
}

static float row_max_visible(const float *sr, const float *colf, long n, float from, float lim) {
  __m512 mx = _mm512_set1_ps(-INFINITY), L = _mm512_set1_ps(lim), F = _mm512_set1_ps(from);
  for (long col = 0; col < n; col += 16) {
    __mmask16 k = row_lanes(col, n);
    __m512 cf = _mm512_maskz_loadu_ps(k, colf + col);
    k = _mm512_mask_cmp_ps_mask(k, cf, L, _CMP_LT_OQ);
    k = _mm512_mask_cmp_ps_mask(k, cf, F, _CMP_GE_OQ);
    mx = _mm512_mask_max_ps(mx, k, mx, _mm512_maskz_loadu_ps(k, sr + col));
  }
  return _mm512_reduce_max_ps(mx);
}

static float row_sum(const float *sr, long n) {
  __m512 acc = _mm512_setzero_ps();
  for (long col = 0; col < n; col += 16)
    acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(row_lanes(col, n), sr + col));
  return _mm512_reduce_add_ps(acc);
}
#else
static float row_max_visible(const float *sr, const float *colf, long n, float from, float lim) {
  float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
  for (long col = 0; col < n; col++) {
    float v = colf[col] < lim && colf[col] >= from ? sr[col] : -INFINITY;
    mx = v > mx ? v : mx;
  }
  return mx;
}

static float row_sum(const float *sr, long n) {
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (long col = 0; col < n; col++) sum += sr[col];
  return sum;
}
#endif

/*
 * One key tile's step of the online softmax (flashFwd) on the scores S [rows, bc] of a query tile
 * (row R at position r0 + R % br, column col at key position c0 + col): S ← e^{S − m_new} on the
 * visible columns (0 elsewhere), l ← e^{m_old − m_new}·l + Σ_col S, O rows rescaled by the same
 * factor, m ← m_new. Packed documents: st (NULL: none) holds the first position of each query's
 * document in this batch row ([T]); keys before it are masked like keys after the query.
 */
static void online_softmax(float *S, long rows, long bc, long hd, long br, long r0, long c0,
                           const float *colf, float *m, double *l, float *o, const float *st) {
  for (long R = 0; R < rows; R++) {
    long r = R % br;
    /* columns col < nValid are at key positions ≤ the query position r0 + r */
    long nValid = r0 + r - c0 + 1;
    if (nValid > bc) nValid = bc;
    /* and columns col ≥ from at positions in the query's document */
    long from = st ? (long)st[r0 + r] - c0 : 0;
    if (from < 0) from = 0;
    float *restrict sr = S + R * bc;
    if (nValid <= from) {
      memset(sr, 0, (size_t)bc * sizeof(float));
      continue;
    }
    /* whole rows with a select, not loops that stop at nValid: those leave a scalar remainder
     * of up to 15 exps per row (masked scores may be unwritten: never used) */
    float lim = (float)nValid, fr = (float)from, rowMax = row_max_visible(sr, colf, bc, fr, lim);
    float mOld = m[R], mNew = mOld > rowMax ? mOld : rowMax;
#pragma omp simd
    for (long col = 0; col < bc; col++) {
      float p = loop_exp_neg(sr[col] - mNew);
      sr[col] = colf[col] < lim && colf[col] >= fr ? p : 0.0f;
    }
    float sum = row_sum(sr, bc);
    if (mOld != mNew) {
      /* mOld = −∞ on the first visited tile: O and l are still zero, alpha = 0 */
      float alpha = mOld == -INFINITY ? 0.0f : loop_exp_neg(mOld - mNew);
      float *restrict orow = o + R * hd;
      for (long e = 0; e < hd; e++) orow[e] *= alpha;
      l[R] = l[R] * alpha + sum;
      m[R] = mNew;
    } else {
      l[R] += sum;
    }
  }
}

/*
 * Units (batch, KV head) are handed to threads as they free up, in runs of one batch's KV heads:
 * a position's row holds every head, so the heads of one batch share cache lines, and a run on
 * one core finds them in its cache (runs of 4 units at Hkv = 4 measured 6–10 % faster than
 * single units, pairs, runs of 8 or contiguous halves); shorter runs when there are too few
 * units for at least 4 runs per thread.
 */
static int unit_run(long units, long Hkv, int nt) {
  long run = units / (4L * nt);
  if (run > Hkv) run = Hkv;
  return run < 1 ? 1 : (int)run;
}

/* work (multiply-adds) of causal attention on B·Hq heads of T positions: below it, one thread */
static int attention_threads(long B, long T, long Hq, long hd) {
  double work = (double)B * (double)Hq * (double)T * (double)T * (double)hd;
  return work < 2.0e6 ? 1 : n_threads;
}

/*
 * flashFwd(q, k, v, y, lse, B, T, Hq, Hkv, hd, blockQ, blockK, ldq, ldk, ldv[, starts]) —
 * attention-forward.ts (docs/model.md §4): q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd],
 * lse [B, Hq, T]; the rows (positions) of q, k and v are ldq, ldk, ldv floats apart (0: packed;
 * they may be column blocks of one [B, T, ·] projection), y is packed;
 * query head j reads KV head floor(j / G), G = Hq / Hkv; c = 1/sqrt(hd), S = c·q·kᵀ (s ≤ t).
 * Tiled FlashAttention-2: for a tile of the G·blockQ query rows of a head group, walk the key
 * tiles left of and on the diagonal with a running row max m and row sum l (online softmax):
 *   O ← e^{m_old − m_new}·O + e^{S − m_new}·V;  at the end y = O / l, lse = m + log l.
 * Every key tile's Kᵀ and V are packed once (first pass, over (batch, KV head) units); then a
 * task is (batch, KV head, query tile) and writes disjoint rows of y and lse.
 */
static napi_value FlashFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args_opt(env, info, &a, 16, 1, "flashFwd")) return NULL;
  const float *starts = loop_f32(&a, 15); /* packed documents (NULL: none) */
  const float *q = loop_f32(&a, 0), *k = loop_f32(&a, 1), *v = loop_f32(&a, 2);
  float *y = loop_f32(&a, 3), *lse = loop_f32(&a, 4);
  long B = loop_long(&a, 5), T = loop_long(&a, 6), Hq = loop_long(&a, 7), Hkv = loop_long(&a, 8);
  long hd = loop_long(&a, 9), bq = loop_long(&a, 10), bk = loop_long(&a, 11);
  if (B <= 0 || T <= 0 || Hq <= 0 || Hkv <= 0 || hd <= 0) return NULL;
  long ldy = Hq * hd, ldq = row_stride(&a, 12, ldy), ldk = row_stride(&a, 13, Hkv * hd);
  long ldv = row_stride(&a, 14, Hkv * hd);
  if (!q || !k || !v || !y || !lse || bq <= 0 || bk <= 0 || Hq % Hkv != 0 || ldq < 0 || ldk < 0 ||
      ldv < 0) {
    napi_throw_type_error(env, NULL, "flashFwd: bad arguments");
    return NULL;
  }
  if (bq > T) bq = T;
  if (bk > T) bk = T;
  long G = Hq / Hkv;
  long nQT = (T + bq - 1) / bq, nKT = (T + bk - 1) / bk, units = B * Hkv;
  float c = (float)(1.0 / sqrt((double)hd));
  int nt = attention_threads(B, T, Hq, hd), run = unit_run(units, Hkv, nt);
  /* packed key tiles: per unit and key tile, Kᵀ [hd, bk] and V [bk, hd] as B panels */
  long kTile = panels_b(hd, bk), vTile = panels_b(bk, hd), perUnit = nKT * (kTile + vTile);
  /* per-thread blocks of a multiple of 16 floats (64 bytes) */
  long rowsMax = G * bq;
  long per = (perUnit + 2 * rowsMax + rowsMax * hd + 2 * panels_a(rowsMax, hd) + rowsMax * bk +
              panels_a(rowsMax, bk) + rowsMax + bk + 15) / 16 * 16;
  LOOP_KEPT(fwd_scratch);
  float *scratch = loop_keep(&fwd_scratch, &fwd_scratch_cap, (size_t)(nt * per) * sizeof(float));
  if (!scratch) {
    napi_throw_error(env, NULL, "flashFwd: out of memory");
    return NULL;
  }
#pragma omp parallel num_threads(nt)
  {
    /* per thread: the unit's packed key tiles ku (first: panels are read as aligned vectors),
     * l [rows] (double), o [rows, hd], Aq [panels] and qg, S [rows, bk], Ap, m [rows], colf */
    float *ku = scratch + omp_get_thread_num() * per, *vu = ku + nKT * kTile;
    double *l = (double *)(ku + perUnit);
    float *o = (float *)(l + rowsMax);
    float *Aq = o + rowsMax * hd, *S = Aq + 2 * panels_a(rowsMax, hd), *Ap = S + rowsMax * bk;
    float *m = Ap + panels_a(rowsMax, bk), *qg = Aq + panels_a(rowsMax, hd);
    float *colf = m + rowsMax;
    column_numbers(colf, bk);
    /* a task is a unit: its key tiles are packed once into the thread's scratch (they stay in
     * L2 for all its query tiles; packing every unit up front and reading them back for each
     * query tile went through memory); runs of units as unit_run says */
#pragma omp for schedule(dynamic, run)
    for (long unit = 0; unit < units; unit++) {
      long b = unit / Hkv, g = unit % Hkv, kBase = b * T * ldk + g * hd;
      long vBase = b * T * ldv + g * hd;
      for (long kt = 0; kt < nKT; kt++) {
        long c0 = kt * bk, bc = T - c0 < bk ? T - c0 : bk;
        pack_bpanels(k + kBase + c0 * ldk, ldk, 1, hd, bc, ku + kt * kTile);
        pack_bpanels(v + vBase + c0 * ldv, ldv, 0, bc, hd, vu + kt * vTile);
      }
      long qBase = b * T * ldq + g * G * hd, yBase = b * T * ldy + g * G * hd;
      for (long qt = 0; qt < nQT; qt++) {
        long r0 = qt * bq, br = T - r0 < bq ? T - r0 : bq, rows = G * br;
        pack_group(q, qBase, ldq, r0, br, G, hd, qg);
        pack_apanels(qg, hd, 0, rows, hd, Aq);
        for (long R = 0; R < rows; R++) {
          m[R] = -INFINITY;
          l[R] = 0;
        }
        memset(o, 0, (size_t)(rows * hd) * sizeof(float));
        /* key tiles that some query of this tile can see: c0 ≤ r0 + br − 1 */
        for (long kt = 0; kt * bk < r0 + br; kt++) {
          long c0 = kt * bk, bc = T - c0 < bk ? T - c0 : bk;
          gemm_scores(rows, bc, hd, c, Aq, ku + kt * kTile, S, br, r0, c0);
          online_softmax(S, rows, bc, hd, br, r0, c0, colf, m, l, o, starts ? starts + b * T : NULL);
          pack_apanels(S, bc, 0, rows, bc, Ap);
          gemm_rows_causal(rows, hd, bc, 1.0f, Ap, vu + kt * vTile, o, hd, br, r0, c0);
        }
        for (long R = 0; R < rows; R++) {
          long jj = R / br, r = R % br;
          float inv = (float)(1.0 / l[R]);
          float *restrict yr = y + yBase + (r0 + r) * ldy + jj * hd;
          const float *restrict orow = o + R * hd;
          for (long e = 0; e < hd; e++) yr[e] = orow[e] * inv;
          lse[(b * Hq + g * G + jj) * T + r0 + r] = (float)((double)m[R] + log(l[R]));
        }
      }
    }
  }
  return NULL;
}

/*
 * flashBwd(q, k, v, y, lse, gy, dq|null, dk|null, dv|null, B, T, Hq, Hkv, hd, blockQ, blockK,
 *          ldq, ldk, ldv, ldgq, ldgk, ldgv[, starts]) — (starts [B·T]: packed documents, the
 *          first position of each query's document, keys before it masked; NULL: none) —
 * attention-backward.ts (docs/model.md §4), shapes and strides of q, k, v as flashFwd, y and
 * gy = ∂y [B, T, Hq, hd] packed; the outputs given (dq [B, T, Hq, hd], dk, dv [B, T, Hkv, hd],
 * rows ldgq, ldgk, ldgv floats apart, 0: packed) are overwritten, null ones are not computed.
 * With Dvec[t] = Σ_e gy[t,e]·y[t,e], per (query tile, key tile) of a head group:
 *   P = e^{S − lse} (recomputed from the saved lse),  dV += Pᵀ·gy,  dP = gy·Vᵀ,
 *   dS = P ⊙ (dP − Dvec),  dQ += c·dS·K,  dK += c·dSᵀ·Q.
 * A unit is (batch, KV head): it owns dk, dv of its KV head and dq of its G query heads, so
 * units run in parallel without write conflicts and each sum is added in the same order for any
 * thread count. A unit packs its key tiles (Kᵀ, Vᵀ, K) once, each query tile its q and gy.
 */
static napi_value FlashBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args_opt(env, info, &a, 23, 1, "flashBwd")) return NULL;
  const float *starts = loop_f32(&a, 22); /* packed documents (NULL: none) */
  const float *q = loop_f32(&a, 0), *k = loop_f32(&a, 1), *v = loop_f32(&a, 2);
  const float *y = loop_f32(&a, 3), *lse = loop_f32(&a, 4), *gy = loop_f32(&a, 5);
  float *dq = loop_f32(&a, 6), *dk = loop_f32(&a, 7), *dv = loop_f32(&a, 8);
  long B = loop_long(&a, 9), T = loop_long(&a, 10), Hq = loop_long(&a, 11), Hkv = loop_long(&a, 12);
  long hd = loop_long(&a, 13), bq = loop_long(&a, 14), bk = loop_long(&a, 15);
  if (B <= 0 || T <= 0 || Hq <= 0 || Hkv <= 0 || hd <= 0) return NULL;
  if (!dq && !dk && !dv) return NULL;
  long ldy = Hq * hd, ldq = row_stride(&a, 16, ldy), ldk = row_stride(&a, 17, Hkv * hd);
  long ldv = row_stride(&a, 18, Hkv * hd), ldgq = row_stride(&a, 19, ldy);
  long ldgk = row_stride(&a, 20, Hkv * hd), ldgv = row_stride(&a, 21, Hkv * hd);
  if (!q || !k || !v || !y || !lse || !gy || bq <= 0 || bk <= 0 || Hq % Hkv != 0 || ldq < 0 ||
      ldk < 0 || ldv < 0 || ldgq < 0 || ldgk < 0 || ldgv < 0) {
    napi_throw_type_error(env, NULL, "flashBwd: bad arguments");
    return NULL;
  }
  if (bq > T) bq = T;
  if (bk > T) bk = T;
  long G = Hq / Hkv, units = B * Hkv;
  long nKT = (T + bk - 1) / bk;
  float c = (float)(1.0 / sqrt((double)hd));
  int nt = attention_threads(B, T, Hq, hd), run = unit_run(units, Hkv, nt);
  long rowsMax = G * bq;
  /* per unit: Kᵀ [hd, bk], Vᵀ [hd, bk] and K [bk, hd] of every key tile as B panels */
  long ktTile = panels_b(hd, bk), kTile = panels_b(bk, hd);
  long pa = panels_a(rowsMax, hd), pb = panels_b(rowsMax, hd), ps = panels_a(bk, rowsMax);
  long per = (nKT * (2 * ktTile + kTile) + 3 * rowsMax * hd + 2 * pa + 2 * pb + 2 * rowsMax * bk +
              2 * ps + panels_a(rowsMax, bk) + 2 * rowsMax + bk + 15) / 16 * 16;
  LOOP_KEPT(bwd_scratch);
  LOOP_KEPT(bwd_dvec);
  float *scratch = loop_keep(&bwd_scratch, &bwd_scratch_cap, (size_t)(nt * per) * sizeof(float));
  float *dvall = loop_keep(&bwd_dvec, &bwd_dvec_cap, (size_t)(B * T * Hq) * sizeof(float));
  if (!scratch || !dvall) {
    napi_throw_error(env, NULL, "flashBwd: out of memory");
    return NULL;
  }
#pragma omp parallel num_threads(nt)
  {
    float *KT = scratch + omp_get_thread_num() * per;
    float *VT = KT + nKT * ktTile, *Kp = VT + nKT * ktTile;
    float *qg = Kp + nKT * kTile, *gg = qg + rowsMax * hd, *dqg = gg + rowsMax * hd;
    float *Aq = dqg + rowsMax * hd, *Ag = Aq + pa, *Bq = Ag + pa, *Bg = Bq + pb;
    float *P = Bg + pb, *dS = P + rowsMax * bk;
    float *APt = dS + rowsMax * bk, *AdSt = APt + ps, *AdS = AdSt + ps;
    float *dvec = AdS + panels_a(rowsMax, bk), *lrow = dvec + rowsMax, *colf = lrow + rowsMax;
    column_numbers(colf, bk);
    /* Dvec of every (b, t, head) first, in one pass over y and gy (they are read in order here,
     * not a head's strided rows per query tile) */
#pragma omp for schedule(static)
    for (long row = 0; row < B * T * Hq; row++) {
      const float *restrict gr = gy + row * hd, *restrict yr = y + row * hd;
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (long e = 0; e < hd; e++) s += gr[e] * yr[e];
      dvall[row] = s;
    }
    /* runs of units as unit_run says (10 % faster than contiguous halves here) */
#pragma omp for schedule(dynamic, run)
    for (long unit = 0; unit < units; unit++) {
      long b = unit / Hkv, g = unit % Hkv;
      long kBase = b * T * ldk + g * hd, vBase = b * T * ldv + g * hd;
      long gkBase = b * T * ldgk + g * hd, gvBase = b * T * ldgv + g * hd;
      long qBase = b * T * ldq + g * G * hd, yBase = b * T * ldy + g * G * hd;
      long gqBase = b * T * ldgq + g * G * hd;
      /* with square tiles, a key tile's first query tile is its diagonal one, and there every
       * key row is written (beta = 0 below): no zeroing pass over dk and dv */
      for (long t = 0; t < T && bq != bk; t++) {
        if (dk) memset(dk + gkBase + t * ldgk, 0, (size_t)hd * sizeof(float));
        if (dv) memset(dv + gvBase + t * ldgv, 0, (size_t)hd * sizeof(float));
      }
      for (long kt = 0; kt < nKT; kt++) {
        long c0 = kt * bk, bc = T - c0 < bk ? T - c0 : bk;
        pack_bpanels(k + kBase + c0 * ldk, ldk, 1, hd, bc, KT + kt * ktTile);
        pack_bpanels(v + vBase + c0 * ldv, ldv, 1, hd, bc, VT + kt * ktTile);
        if (dq) pack_bpanels(k + kBase + c0 * ldk, ldk, 0, bc, hd, Kp + kt * kTile);
      }
      for (long r0 = 0; r0 < T; r0 += bq) {
        long br = T - r0 < bq ? T - r0 : bq, rows = G * br;
        pack_group(q, qBase, ldq, r0, br, G, hd, qg);
        pack_group(gy, yBase, ldy, r0, br, G, hd, gg);
        pack_apanels(qg, hd, 0, rows, hd, Aq);
        pack_apanels(gg, hd, 0, rows, hd, Ag);
        if (dk) pack_bpanels(qg, hd, 0, rows, hd, Bq);
        if (dv) pack_bpanels(gg, hd, 0, rows, hd, Bg);
        for (long R = 0; R < rows; R++) {
          long jj = R / br, r = R % br;
          dvec[R] = dvall[(b * T + r0 + r) * Hq + g * G + jj];
          lrow[R] = lse[(b * Hq + g * G + jj) * T + r0 + r];
        }
        if (dq) memset(dqg, 0, (size_t)(rows * hd) * sizeof(float));
        for (long kt = 0; kt * bk < r0 + br; kt++) {
          long c0 = kt * bk, bc = T - c0 < bk ? T - c0 : bk;
          gemm_scores(rows, bc, hd, c, Aq, KT + kt * ktTile, P, br, r0, c0);
          gemm_scores(rows, bc, hd, 1.0f, Ag, VT + kt * ktTile, dS, br, r0, c0);
          for (long R = 0; R < rows; R++) {
            long r = R % br;
            long nValid = r0 + r - c0 + 1;
            if (nValid > bc) nValid = bc;
            if (nValid < 0) nValid = 0;
            float fr = starts ? starts[b * T + r0 + r] - (float)c0 : 0.0f;
            float *restrict pr = P + R * bc, *restrict dr = dS + R * bc;
            float lr = lrow[R], dvr = dvec[R], lim = (float)nValid;
            /* whole rows with a select (as flashFwd; masked scores may be unwritten) */
#pragma omp simd
            for (long col = 0; col < bc; col++) {
              int vis = colf[col] < lim && colf[col] >= fr;
              float p = loop_exp_neg(pr[col] - lr);
              p = vis ? p : 0.0f;
              pr[col] = p;
              dr[col] = vis ? p * (dr[col] - dvr) : 0.0f;
            }
          }
          float beta = bq == bk && c0 == r0 ? 0.0f : 1.0f;
          if (dv) {
            pack_apanels(P, bc, 1, bc, rows, APt);
            gemm_keys_causal(bc, hd, rows, 1.0f, APt, Bg, beta, dv + gvBase + c0 * ldgv, ldgv,
                             r0, c0);
          }
          if (dk) {
            pack_apanels(dS, bc, 1, bc, rows, AdSt);
            gemm_keys_causal(bc, hd, rows, c, AdSt, Bq, beta, dk + gkBase + c0 * ldgk, ldgk,
                             r0, c0);
          }
          if (dq) {
            pack_apanels(dS, bc, 0, rows, bc, AdS);
            gemm_rows_causal(rows, hd, bc, c, AdS, Kp + kt * kTile, dqg, hd, br, r0, c0);
          }
        }
        if (dq)
          for (long jj = 0; jj < G; jj++)
            for (long r = 0; r < br; r++)
              copy_row(dq + gqBase + (r0 + r) * ldgq + jj * hd, dqg + (jj * br + r) * hd, hd);
      }
    }
  }
  return NULL;
}

/*
 * swigluFwd(gate, up, y, n) — swiglu.ts (docs/model.md §5), gate, up, y [n]:
 *   y = silu(gate) ⊙ up = gate·σ(gate)·up.
 */
static napi_value SwigluFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 4, "swigluFwd")) return NULL;
  const float *restrict g = loop_f32(&a, 0), *restrict u = loop_f32(&a, 1);
  float *restrict y = loop_f32(&a, 2);
  long n = loop_long(&a, 3);
  if (n <= 0) return NULL;
  if (!g || !u || !y) {
    napi_throw_type_error(env, NULL, "swigluFwd: gate, up and y must be Float32Arrays");
    return NULL;
  }
#pragma omp parallel for simd num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
  for (long i = 0; i < n; i++) y[i] = g[i] * loop_sigmoid(g[i]) * u[i];
  return NULL;
}

/*
 * swigluBwd(gate, up, gy, dgate|null, dup|null, n) — swiglu.ts (docs/model.md §5), all [n]:
 *   ∂gate = gy ⊙ up ⊙ σ(gate)·(1 + gate·(1 − σ(gate))),  ∂up = gy ⊙ gate·σ(gate).
 */
static napi_value SwigluBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 6, "swigluBwd")) return NULL;
  const float *restrict g = loop_f32(&a, 0), *restrict u = loop_f32(&a, 1);
  const float *restrict gy = loop_f32(&a, 2);
  float *restrict dg = loop_f32(&a, 3), *restrict du = loop_f32(&a, 4);
  long n = loop_long(&a, 5);
  if (n <= 0 || (!dg && !du)) return NULL;
  if (!g || !u || !gy) {
    napi_throw_type_error(env, NULL, "swigluBwd: gate, up and gy must be Float32Arrays");
    return NULL;
  }
  if (dg && du) {
#pragma omp parallel for simd num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) {
      float x = g[i], s = loop_sigmoid(x);
      dg[i] = gy[i] * u[i] * s * (1.0f + x * (1.0f - s));
      du[i] = gy[i] * x * s;
    }
  } else if (dg) {
#pragma omp parallel for simd num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) {
      float x = g[i], s = loop_sigmoid(x);
      dg[i] = gy[i] * u[i] * s * (1.0f + x * (1.0f - s));
    }
  } else {
#pragma omp parallel for simd num_threads(n_threads) if (n >= PAR_MIN) schedule(static)
    for (long i = 0; i < n; i++) du[i] = gy[i] * g[i] * loop_sigmoid(g[i]);
  }
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "rope", Rope);
  loop_export(env, exports, "flashFwd", FlashFwd);
  loop_export(env, exports, "flashBwd", FlashBwd);
  loop_export(env, exports, "swigluFwd", SwigluFwd);
  loop_export(env, exports, "swigluBwd", SwigluBwd);
  loop_export(env, exports, "setThreads", loop_set_threads);
  return exports;
}
