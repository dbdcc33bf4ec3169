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
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "fast-math.h"
#include "napi-args.h"
#include "sgemm.h"

static int n_threads = 1;

/* elementwise loops run on all threads above this many elements */
#define PAR_MIN 32768

/* Float64Array data (adjusted by its byte offset), or NULL for anything else. */
static const double *loop_f64(loop_args *a, size_t i) {
  napi_valuetype t;
  napi_typeof(a->env, a->v[i], &t);
  if (t != napi_object) return NULL;
  bool is;
  napi_is_typedarray(a->env, a->v[i], &is);
  if (!is) return NULL;
  napi_typedarray_type type;
  size_t len;
  void *data;
  napi_get_typedarray_info(a->env, a->v[i], &type, &len, &data, NULL, NULL);
  return type == napi_float64_array ? (const double *)data : NULL;
}

/*
 * rope(src, dst, B, T, H, hd, cos, sin, sign) — rope.ts `rotate` (model.md §4, rotate-half):
 *   src, dst [B, T, H, hd] float32 (dst may be src), cos, sin [T, hd/2] float64 (ropeTables),
 *   sign = +1 (forward, angle +a) or −1 (backward, angle −a); pair i < hd/2, s = sign·sin:
 *     dst[i] = src[i]·cos − src[i + hd/2]·s,  dst[i + hd/2] = src[i + hd/2]·cos + src[i]·s
 *   computed in float64 and rounded to float32, as the portable loop does.
 */
static napi_value Rope(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 9, "rope")) return NULL;
  const float *src = loop_f32(&a, 0);
  float *dst = loop_f32(&a, 1);
  long B = loop_long(&a, 2), T = loop_long(&a, 3), H = loop_long(&a, 4), hd = loop_long(&a, 5);
  const double *cs = loop_f64(&a, 6), *sn = loop_f64(&a, 7);
  double sign = loop_num(&a, 8) < 0 ? -1.0 : 1.0;
  long rows = B * T, half = hd / 2;
  if (rows <= 0 || H <= 0 || half <= 0) return NULL;
  if (!src || !dst || !cs || !sn) {
    napi_throw_type_error(env, NULL, "rope: src, dst must be Float32Arrays, cos, sin Float64");
    return NULL;
  }
  int nt = rows * H * hd >= PAR_MIN ? n_threads : 1;
  /* one head's row is copied first (per thread), so dst may alias src */
  float *buf = malloc((size_t)(nt * hd) * sizeof(float));
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
        long o = (row * H + h) * hd;
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
  free(buf);
  return NULL;
}

/* rows R = jj·br + r of a query tile of one head group into dst [G·br, hd] (attention-pack.ts) */
static void pack_group(const float *src, long base, long ld, long r0, long br, long G, long hd,
                       float *restrict dst) {
  for (long jj = 0; jj < G; jj++)
    for (long r = 0; r < br; r++)
      memcpy(dst + (jj * br + r) * hd, src + base + (r0 + r) * ld + jj * hd,
             (size_t)hd * sizeof(float));
}

/* work (multiply-adds) of causal attention on B·Hq heads of T positions: below it, one thread */
static int attention_threads(long B, long T, long Hq, long hd) {
  double work = (double)B * (double)Hq * (double)T * (double)T * (double)hd;
  return work < 2.0e6 ? 1 : n_threads;
}

/*
 * flashFwd(q, k, v, y, lse, B, T, Hq, Hkv, hd, blockQ, blockK) — attention-forward.ts
 * (model.md §4): q [B, T, Hq, hd], k, v [B, T, Hkv, hd] → y [B, T, Hq, hd], lse [B, Hq, T];
 * query head j reads KV head floor(j / G), G = Hq / Hkv; c = 1/sqrt(hd), S = c·q·kᵀ (s ≤ t).
 * Tiled FlashAttention-2: for a tile of the G·blockQ query rows of a head group, walk the key
 * tiles left of and on the diagonal with a running row max m and row sum l (online softmax):
 *   O ← e^{m_old − m_new}·O + e^{S − m_new}·V;  at the end y = O / l, lse = m + log l.
 * A task is (batch, KV head, query tile); tasks write disjoint rows of y and lse. The tile
 * products run through the serial loop_gemm_block inside the task.
 */
static napi_value FlashFwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 12, "flashFwd")) return NULL;
  const float *q = loop_f32(&a, 0), *k = loop_f32(&a, 1), *v = loop_f32(&a, 2);
  float *y = loop_f32(&a, 3), *lse = loop_f32(&a, 4);
  long B = loop_long(&a, 5), T = loop_long(&a, 6), Hq = loop_long(&a, 7), Hkv = loop_long(&a, 8);
  long hd = loop_long(&a, 9), bq = loop_long(&a, 10), bk = loop_long(&a, 11);
  if (B <= 0 || T <= 0 || Hq <= 0 || Hkv <= 0 || hd <= 0) return NULL;
  if (!q || !k || !v || !y || !lse || bq <= 0 || bk <= 0 || Hq % Hkv != 0) {
    napi_throw_type_error(env, NULL, "flashFwd: bad arguments");
    return NULL;
  }
  long G = Hq / Hkv, ldq = Hq * hd, ldk = Hkv * hd;
  long nQT = (T + bq - 1) / bq, units = B * Hkv, tasks = units * nQT;
  float c = (float)(1.0 / sqrt((double)hd));
  int nt = attention_threads(B, T, Hq, hd);
  /* per-thread blocks of a multiple of 16 floats (64 bytes) */
  long rowsMax = G * bq, per = (rowsMax * (2 * hd + bk + 3) + 15) / 16 * 16;
  float *scratch = malloc((size_t)(nt * per) * sizeof(float));
  if (!scratch) {
    napi_throw_error(env, NULL, "flashFwd: out of memory");
    return NULL;
  }
#pragma omp parallel num_threads(nt)
  {
    /* per thread: l [rows] (double), qg, o [rows, hd], S [rows, bk], m [rows] */
    double *l = (double *)(scratch + omp_get_thread_num() * per);
    float *qg = (float *)(l + rowsMax);
    float *o = qg + rowsMax * hd, *S = o + rowsMax * hd, *m = S + rowsMax * bk;
    /* the last query tiles (most key tiles) first, for balance */
#pragma omp for schedule(dynamic, 1)
    for (long task = 0; task < tasks; task++) {
      long qt = nQT - 1 - task / units, unit = task % units;
      long b = unit / Hkv, g = unit % Hkv;
      long kBase = b * T * ldk + g * hd, qBase = b * T * ldq + g * G * hd;
      long r0 = qt * bq, br = T - r0 < bq ? T - r0 : bq, rows = G * br;
      pack_group(q, qBase, ldq, r0, br, G, hd, qg);
      for (long R = 0; R < rows; R++) {
        m[R] = -INFINITY;
        l[R] = 0;
      }
      memset(o, 0, (size_t)(rows * hd) * sizeof(float));
      /* key tiles that some query of this tile can see: c0 ≤ r0 + br − 1 */
      for (long c0 = 0; c0 < r0 + br; c0 += bk) {
        long bc = T - c0 < bk ? T - c0 : bk;
        loop_gemm_block(0, 1, 0, rows, 0, bc, hd, c, qg, hd, k + kBase + c0 * ldk, ldk, 0.0f, S,
                        bc);
        for (long R = 0; R < rows; R++) {
          long r = R % br;
          /* columns col < nValid are at key positions ≤ the query position r0 + r */
          long nValid = r0 + r - c0 + 1;
          if (nValid > bc) nValid = bc;
          float *restrict sr = S + R * bc;
          if (nValid <= 0) {
            memset(sr, 0, (size_t)bc * sizeof(float));
            continue;
          }
          float rowMax = -INFINITY;
#pragma omp simd reduction(max : rowMax)
          for (long col = 0; col < nValid; col++) rowMax = sr[col] > rowMax ? sr[col] : rowMax;
          float mOld = m[R], mNew = mOld > rowMax ? mOld : rowMax;
          float sum = 0;
#pragma omp simd reduction(+ : sum)
          for (long col = 0; col < bc; col++) {
            float p = col < nValid ? loop_exp_neg(sr[col] - mNew) : 0.0f;
            sr[col] = p;
            sum += p;
          }
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
        loop_gemm_block(0, 0, 0, rows, 0, hd, bc, 1.0f, S, bc, v + kBase + c0 * ldk, ldk, 1.0f, o,
                        hd);
      }
      for (long R = 0; R < rows; R++) {
        long jj = R / br, r = R % br;
        float inv = (float)(1.0 / l[R]);
        float *restrict yr = y + qBase + (r0 + r) * ldq + jj * hd;
        const float *restrict orow = o + R * hd;
        for (long e = 0; e < hd; e++) yr[e] = orow[e] * inv;
        lse[(b * Hq + g * G + jj) * T + r0 + r] = (float)((double)m[R] + log(l[R]));
      }
    }
  }
  free(scratch);
  return NULL;
}

/*
 * flashBwd(q, k, v, y, lse, gy, dq|null, dk|null, dv|null, B, T, Hq, Hkv, hd, blockQ, blockK) —
 * attention-backward.ts (model.md §4), shapes as flashFwd, gy = ∂y [B, T, Hq, hd]; the outputs
 * given (dq [B, T, Hq, hd], dk, dv [B, T, Hkv, hd]) are overwritten, null ones are not computed.
 * With Dvec[t] = Σ_e gy[t,e]·y[t,e], per (query tile, key tile) of a head group:
 *   P = e^{S − lse} (recomputed from the saved lse),  dV += Pᵀ·gy,  dP = gy·Vᵀ,
 *   dS = P ⊙ (dP − Dvec),  dQ += c·dS·K,  dK += c·dSᵀ·Q.
 * A unit is (batch, KV head): it owns dk, dv of its KV head and dq of its G query heads, so
 * units run in parallel without write conflicts and each sum is added in the same order for any
 * thread count.
 */
static napi_value FlashBwd(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 16, "flashBwd")) return NULL;
  const float *q = loop_f32(&a, 0), *k = loop_f32(&a, 1), *v = loop_f32(&a, 2);
  const float *y = loop_f32(&a, 3), *lse = loop_f32(&a, 4), *gy = loop_f32(&a, 5);
  float *dq = loop_f32(&a, 6), *dk = loop_f32(&a, 7), *dv = loop_f32(&a, 8);
  long B = loop_long(&a, 9), T = loop_long(&a, 10), Hq = loop_long(&a, 11), Hkv = loop_long(&a, 12);
  long hd = loop_long(&a, 13), bq = loop_long(&a, 14), bk = loop_long(&a, 15);
  if (B <= 0 || T <= 0 || Hq <= 0 || Hkv <= 0 || hd <= 0) return NULL;
  if (!dq && !dk && !dv) return NULL;
  if (!q || !k || !v || !y || !lse || !gy || bq <= 0 || bk <= 0 || Hq % Hkv != 0) {
    napi_throw_type_error(env, NULL, "flashBwd: bad arguments");
    return NULL;
  }
  long G = Hq / Hkv, ldq = Hq * hd, ldk = Hkv * hd, units = B * Hkv;
  float c = (float)(1.0 / sqrt((double)hd));
  int nt = attention_threads(B, T, Hq, hd);
  long rowsMax = G * bq, per = (rowsMax * (3 * hd + 2 * bk + 2) + 15) / 16 * 16;
  float *scratch = malloc((size_t)(nt * per) * sizeof(float));
  if (!scratch) {
    napi_throw_error(env, NULL, "flashBwd: out of memory");
    return NULL;
  }
#pragma omp parallel num_threads(nt)
  {
    /* per thread: qg, gg, dqg [rows, hd], P, dS [rows, bk], dvec, lrow [rows] */
    float *qg = scratch + omp_get_thread_num() * per;
    float *gg = qg + rowsMax * hd, *dqg = gg + rowsMax * hd, *P = dqg + rowsMax * hd;
    float *dS = P + rowsMax * bk, *dvec = dS + rowsMax * bk, *lrow = dvec + rowsMax;
#pragma omp for schedule(dynamic, 1)
    for (long unit = 0; unit < units; unit++) {
      long b = unit / Hkv, g = unit % Hkv;
      long kBase = b * T * ldk + g * hd, qBase = b * T * ldq + g * G * hd;
      for (long t = 0; t < T; t++) {
        if (dk) memset(dk + kBase + t * ldk, 0, (size_t)hd * sizeof(float));
        if (dv) memset(dv + kBase + t * ldk, 0, (size_t)hd * sizeof(float));
      }
      for (long r0 = 0; r0 < T; r0 += bq) {
        long br = T - r0 < bq ? T - r0 : bq, rows = G * br;
        pack_group(q, qBase, ldq, r0, br, G, hd, qg);
        pack_group(gy, qBase, ldq, r0, br, G, hd, gg);
        for (long R = 0; R < rows; R++) {
          long jj = R / br, r = R % br;
          const float *restrict gr = gy + qBase + (r0 + r) * ldq + jj * hd;
          const float *restrict yr = y + qBase + (r0 + r) * ldq + jj * hd;
          float s = 0;
#pragma omp simd reduction(+ : s)
          for (long e = 0; e < hd; e++) s += gr[e] * yr[e];
          dvec[R] = s;
          lrow[R] = lse[(b * Hq + g * G + jj) * T + r0 + r];
        }
        if (dq) memset(dqg, 0, (size_t)(rows * hd) * sizeof(float));
        for (long c0 = 0; c0 < r0 + br; c0 += bk) {
          long bc = T - c0 < bk ? T - c0 : bk;
          const float *kt = k + kBase + c0 * ldk, *vt = v + kBase + c0 * ldk;
          loop_gemm_block(0, 1, 0, rows, 0, bc, hd, c, qg, hd, kt, ldk, 0.0f, P, bc);
          loop_gemm_block(0, 1, 0, rows, 0, bc, hd, 1.0f, gg, hd, vt, ldk, 0.0f, dS, bc);
          for (long R = 0; R < rows; R++) {
            long r = R % br;
            long nValid = r0 + r - c0 + 1;
            if (nValid > bc) nValid = bc;
            float *restrict pr = P + R * bc, *restrict dr = dS + R * bc;
            float lr = lrow[R], dvr = dvec[R];
#pragma omp simd
            for (long col = 0; col < bc; col++) {
              float p = col < nValid ? loop_exp_neg(pr[col] - lr) : 0.0f;
              pr[col] = p;
              dr[col] = p * (dr[col] - dvr);
            }
          }
          if (dv)
            loop_gemm_block(1, 0, 0, bc, 0, hd, rows, 1.0f, P, bc, gg, hd, 1.0f,
                            dv + kBase + c0 * ldk, ldk);
          if (dk)
            loop_gemm_block(1, 0, 0, bc, 0, hd, rows, c, dS, bc, qg, hd, 1.0f,
                            dk + kBase + c0 * ldk, ldk);
          if (dq) loop_gemm_block(0, 0, 0, rows, 0, hd, bc, c, dS, bc, kt, ldk, 1.0f, dqg, hd);
        }
        if (dq)
          for (long jj = 0; jj < G; jj++)
            for (long r = 0; r < br; r++)
              memcpy(dq + qBase + (r0 + r) * ldq + jj * hd, dqg + (jj * br + r) * hd,
                     (size_t)hd * sizeof(float));
      }
    }
  }
  free(scratch);
  return NULL;
}

/*
 * swigluFwd(gate, up, y, n) — swiglu.ts (model.md §5), gate, up, y [n]:
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
 * swigluBwd(gate, up, gy, dgate|null, dup|null, n) — swiglu.ts (model.md §5), all [n]:
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

/* setThreads(n): threads used by every kernel of this addon from now on */
static napi_value SetThreads(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 1, "setThreads")) return NULL;
  long n = loop_long(&a, 0);
  n_threads = n < 1 ? 1 : (int)n;
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "rope", Rope);
  loop_export(env, exports, "flashFwd", FlashFwd);
  loop_export(env, exports, "flashBwd", FlashBwd);
  loop_export(env, exports, "swigluFwd", SwigluFwd);
  loop_export(env, exports, "swigluBwd", SwigluBwd);
  loop_export(env, exports, "setThreads", SetThreads);
  return exports;
}
