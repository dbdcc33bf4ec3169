/*
 * The one-token recurrent step of the Mamba-2 mixer (src/mamba2-step.ts, docs/model.md §3) as
 * one native call, for decoding. For each input row j (state row b = rows[j], or j without rows),
 * with u [D]:
 *   [z, xBC, dt] = u·in_projᵀ
 *   conv: v[c] = bias[c] + w[c,K−1]·xBC[c] + Σ_{k<K−1} w[c,k]·conv[b,c,k];  the conv state
 *         shifts left and takes xBC (oldest first);  xBC ← silu(v)
 *   x [H,P], B [G,N], C [G,N] ← xBC;  dt_h = clamp(softplus(dt_h + dt_bias_h), dt_lo, dt_hi),
 *   a_h = e^{−dt_h·e^{A_log_h}}
 *   S[b,h] ← a_h·S[b,h] + dt_h·(x_h ⊗ B_g);  y_h = S[b,h]·C_g + D_h·x_h      (g = h / (H/G))
 *   y ← gated RMSNorm(y, z) (per group of Di/NG channels, eps);  out = y·out_projᵀ
 * The clamp is Hugging Face's and mamba_ssm's time_step_limit ([0, ∞): no change); NG, the norm's
 * group count, is G (mamba_ssm) or 1 (transformers' PyTorch path).
 * Shapes: u [n,D]; in_proj [E,D] (E = 2·Di + 2·G·N + H); conv weight [C,K], bias [C]
 * (C = Di + 2·G·N); dt_bias, A_log, D [H]; norm weight [Di]; out_proj [D,Di]; conv state
 * [S,C,K−1] and ssm state [S,H,P,N] (S state rows, updated in place) → out [n,D].
 * Without out (absorb: early-exit decoding's skipped steps) only the xBC and dt rows of in_proj
 * and the state update run.
 * With a pre-norm weight (layer mode: the pre-norm residual layer around the mixer, as
 * Mamba2Mixer.stepResidual, docs/model.md §2), the rows of u are the residual stream h: the
 * mixer reads rmsnorm(h) = h·r ⊙ pre_w, r = 1/√(mean h² + pre_eps), and out = h + mixer output.
 *
 * Why one call: a decoding step is a few hundred thousand multiply-adds per layer at batch 1–8,
 * where the per-op costs of the portable path (separate GEMM calls with packing for M = 1..8,
 * JavaScript loops over the SSM state, fresh arrays per op) outweigh the arithmetic.
 *
 * Threads: none. The step runs on the calling thread whatever the addon's thread count: a step
 * is at most a few hundred microseconds, and handing rows to a second OpenMP thread stalls
 * whenever that thread is not on a core. On a loaded 2-core machine (batch 8, 2 threads) one
 * hand-off per call made a token take 18 ms instead of 4.4 ms with the step on one thread.
 * (`setThreads` is exported because every addon has it.)
 *
 * Numerics: float32 with fused multiply-adds; every dot product (in_proj and out_proj through
 * gemv.h, y = S·C) keeps 8 partial sums (index mod 8) added in a fixed tree, then the tail in
 * order; softplus, e^{…} and the norm's Σy² in double (the latter an `omp simd` reduction: its order depends on
 * the build's vector width, never on the data). Each output element is computed by the same
 * code whatever the row count or the rows selected, so results are bitwise independent of both
 * (and of the thread count). Agrees with the portable step (its reference,
 * src/node/native-mamba2-step.test.ts) to float32 rounding.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "addon-threads.h"
#include "fast-math.h"
#include "gemv.h"
#include "napi-args.h"
#include "thread-buffer.h"

typedef struct {
  long n, S, D, Di, H, P, N, G, K, C, E, NG;
  float eps, pre_eps;
  double dt_lo, dt_hi;
  const float *pre_w; /* layer mode's pre-norm weight [D], or NULL */
  const float *u, *in_proj, *conv_w, *conv_b, *dt_bias, *a_log, *d, *norm_w, *out_proj;
  float *conv, *ssm, *out;
  const int32_t *rows;
  float *zx, *y, *un; /* scratch: zx [n,E] (in_proj outputs), y [n,Di], un [n,D] (rmsnorm(h)) */
} step_args;

/* conv of input row j with width K: conv state row b advanced, silu(v) written over xBC in zx.
 * Inlined with K a constant for the usual width (conv_row), so the taps unroll and the channel
 * loop vectorises. */
static inline __attribute__((always_inline)) void conv_taps(const step_args *s, long j, long b,
                                                            const long K) {
  const long C = s->C, K1 = K - 1;
  float *restrict xbc = s->zx + j * s->E + s->Di;
  float *restrict st = s->conv + b * C * K1; /* (K = 1: no state, never read) */
  const float *restrict cw = s->conv_w, *restrict cb = s->conv_b;
#pragma omp simd
  for (long c = 0; c < C; c++) {
    const float inp = xbc[c];
    float v = cb[c] + cw[c * K + K1] * inp;
    for (long k = 0; k < K1; k++) v += cw[c * K + k] * st[c * K1 + k];
    for (long k = 0; k + 1 < K1; k++) st[c * K1 + k] = st[c * K1 + k + 1];
    if (K1 > 0) st[c * K1 + K1 - 1] = inp;
    xbc[c] = v * loop_sigmoid(v);
  }
}

static void conv_row(const step_args *s, long j, long b) {
  if (s->K == 4)
    conv_taps(s, j, b, 4);
  else
    conv_taps(s, j, b, s->K);
}

/* the SSM update of head h for input row j (state row b); with out, y_h too */
static void ssm_head(const step_args *s, long j, long b, long h) {
  const long P = s->P, N = s->N, Di = s->Di, G = s->G, H = s->H;
  const long g = h / (H / G);
  const float *row = s->zx + j * s->E;
  const float *restrict xbc = row + Di;
  const float *restrict bv = xbc + Di + g * N, *restrict cv = xbc + Di + G * N + g * N;
  const double raw = (double)row[Di + s->C + h] + (double)s->dt_bias[h];
  const double sp = (raw > 0 ? raw : 0.0) + log1p(exp(-fabs(raw)));
  const double dtd = sp < s->dt_lo ? s->dt_lo : (sp > s->dt_hi ? s->dt_hi : sp);
  const float dt = (float)dtd;
  const float decay = (float)exp(-dtd * exp((double)s->a_log[h]));
  float *restrict S = s->ssm + (b * H + h) * P * N;
  const long NL = N / LOOP_LANES * LOOP_LANES;
  for (long p = 0; p < P; p++) {
    float *restrict sp = S + p * N;
    const float xv = xbc[h * P + p], xp = dt * xv;
    if (!s->out) {
      for (long n = 0; n < NL; n += LOOP_LANES)
        LOOP_ST8(sp + n, decay * LOOP_LD8(sp + n) + xp * LOOP_LD8(bv + n));
      for (long n = NL; n < N; n++) sp[n] = decay * sp[n] + xp * bv[n];
      continue;
    }
    loop_v8 acc = {0};
    for (long n = 0; n < NL; n += LOOP_LANES) {
      const loop_v8 v = decay * LOOP_LD8(sp + n) + xp * LOOP_LD8(bv + n);
      LOOP_ST8(sp + n, v);
      acc += v * LOOP_LD8(cv + n);
    }
    float t = loop_lanes_sum(acc);
    for (long n = NL; n < N; n++) {
      const float v = decay * sp[n] + xp * bv[n];
      sp[n] = v;
      t += v * cv[n];
    }
    s->y[j * Di + h * P + p] = t + s->d[h] * xv;
  }
}

/* gated RMSNorm of y row j in place: v = y·silu(z), per group (NG of them) v·r·weight,
 * r = 1/√(mean v² + eps) */
static void norm_row(const step_args *s, long j) {
  const long Di = s->Di, gs = Di / s->NG;
  const float *restrict z = s->zx + j * s->E;
  float *restrict y = s->y + j * Di;
  for (long g = 0; g < s->NG; g++) {
    double ss = 0;
#pragma omp simd reduction(+ : ss)
    for (long i = g * gs; i < (g + 1) * gs; i++) {
      const float zv = z[i];
      const float v = y[i] * zv * loop_sigmoid(zv);
      y[i] = v;
      ss += (double)v * v;
    }
    const double r = 1.0 / sqrt(ss / (double)gs + s->eps);
#pragma omp simd
    for (long i = g * gs; i < (g + 1) * gs; i++) y[i] = (float)((double)y[i] * r * s->norm_w[i]);
  }
}

/* layer mode's pre-norm of row j: un = h·r ⊙ pre_w, r = 1/√(mean h² + pre_eps) (the sum of
 * squares a float `omp simd` reduction, as @loop/tensor's native rmsnorm) */
static void pre_norm_row(const step_args *s, long j) {
  const long D = s->D;
  const float *restrict h = s->u + j * D, *restrict w = s->pre_w;
  float *restrict un = s->un + j * D;
  float ss = 0;
#pragma omp simd reduction(+ : ss)
  for (long i = 0; i < D; i++) ss += h[i] * h[i];
  const float r = 1.0f / sqrtf(ss / (float)D + s->pre_eps);
#pragma omp simd
  for (long i = 0; i < D; i++) un[i] = h[i] * r * w[i];
}

/* the whole step for input rows [j0, j1) */
static void run_rows(const step_args *s, long j0, long j1) {
  const long n = j1 - j0, e0 = s->out ? 0 : s->Di; /* absorb: only the xBC and dt rows */
  const float *x = s->u;
  if (s->pre_w) {
    for (long j = j0; j < j1; j++) pre_norm_row(s, j);
    x = s->un;
  }
  loop_gemv_rows(s->in_proj, s->D, s->D, e0, s->E, x + j0 * s->D, s->D, n, 1.0f, 0.0f,
                 s->zx + j0 * s->E, s->E);
  for (long j = j0; j < j1; j++) {
    const long b = s->rows ? s->rows[j] : j;
    conv_row(s, j, b);
    for (long h = 0; h < s->H; h++) ssm_head(s, j, b, h);
    if (s->out) norm_row(s, j);
  }
  if (!s->out) return;
  loop_gemv_rows(s->out_proj, s->Di, s->Di, 0, s->D, s->y + j0 * s->Di, s->Di, n, 1.0f, 0.0f,
                 s->out + j0 * s->D, s->D);
  if (s->pre_w) /* layer mode: the residual */
    for (long i = j0 * s->D; i < j1 * s->D; i++) s->out[i] += s->u[i];
}

/* non-negative integer argument i (sizes); throws on anything else */
static long arg_size(loop_args *a, size_t i, const char *what, int *bad) {
  if (*bad) return 0;
  double v = loop_num(a, i);
  if (!(v >= 0) || v != (double)(long)v) {
    char msg[120];
    snprintf(msg, sizeof msg, "mamba2Step: %s must be a non-negative integer", what);
    napi_throw_range_error(a->env, NULL, msg);
    *bad = 1;
    return 0;
  }
  return (long)v;
}

LOOP_KEPT(scratch);

/*
 * step(n, S, D, P, N, G, K, Di, eps, u, in_proj, conv_w, conv_b, dt_bias, A_log, D_skip,
 *      norm_w, out_proj, conv, ssm, rows|null, out|null, pre_w|null, pre_eps, dt_lo, dt_hi, NG)
 * — the header's step for the n rows of u; rows (Int32Array [n], distinct state rows < S) maps
 * input row j to state row rows[j] (without it, j). Without out: the state update alone. With
 * pre_w [D]: layer mode (the header), u being h.
 */
static napi_value Step(napi_env env, napi_callback_info info) {
  loop_args a;
  const char *fn = "mamba2Step";
  if (!loop_get_args(env, info, &a, 27, fn)) return NULL;
  int bad = 0;
  step_args s;
  s.n = arg_size(&a, 0, "n", &bad), s.S = arg_size(&a, 1, "S", &bad);
  s.D = arg_size(&a, 2, "D", &bad), s.P = arg_size(&a, 3, "P", &bad);
  s.N = arg_size(&a, 4, "N", &bad), s.G = arg_size(&a, 5, "G", &bad);
  s.K = arg_size(&a, 6, "K", &bad), s.Di = arg_size(&a, 7, "Di", &bad);
  s.eps = (float)loop_num(&a, 8);
  s.dt_lo = loop_num(&a, 24), s.dt_hi = loop_num(&a, 25);
  s.NG = arg_size(&a, 26, "NG", &bad);
  if (bad) return NULL;
  if (s.P < 1 || s.G < 1 || s.K < 1 || s.Di % s.P != 0 || (s.Di / s.P) % s.G != 0) {
    napi_throw_range_error(env, NULL,
                           "mamba2Step: need P, G, K ≥ 1, P dividing Di and G dividing Di/P");
    return NULL;
  }
  if (s.NG < 1 || s.Di % s.NG != 0 || !(s.dt_lo <= s.dt_hi)) {
    napi_throw_range_error(env, NULL,
                           "mamba2Step: need NG ≥ 1 dividing Di and dt_lo ≤ dt_hi");
    return NULL;
  }
  s.H = s.Di / s.P;
  s.C = s.Di + 2 * s.G * s.N;
  s.E = s.Di + s.C + s.H;
  const long D = s.D, Di = s.Di, H = s.H, C = s.C, K = s.K;
  s.u = loop_arg_f32(&a, 9, s.n * D, 0, fn, "u", &bad);
  s.in_proj = loop_arg_f32(&a, 10, s.E * D, 0, fn, "in_proj", &bad);
  s.conv_w = loop_arg_f32(&a, 11, C * K, 0, fn, "conv weight", &bad);
  s.conv_b = loop_arg_f32(&a, 12, C, 0, fn, "conv bias", &bad);
  s.dt_bias = loop_arg_f32(&a, 13, H, 0, fn, "dt_bias", &bad);
  s.a_log = loop_arg_f32(&a, 14, H, 0, fn, "A_log", &bad);
  s.d = loop_arg_f32(&a, 15, H, 0, fn, "D", &bad);
  s.norm_w = loop_arg_f32(&a, 16, Di, 0, fn, "norm weight", &bad);
  s.out_proj = loop_arg_f32(&a, 17, D * Di, 0, fn, "out_proj", &bad);
  s.conv = loop_arg_f32(&a, 18, s.S * C * (K - 1), 1, fn, "conv state", &bad);
  s.ssm = loop_arg_f32(&a, 19, s.S * H * s.P * s.N, 0, fn, "ssm state", &bad);
  s.out = loop_arg_f32(&a, 21, s.n * D, 1, fn, "out", &bad);
  s.pre_w = loop_arg_f32(&a, 22, D, 1, fn, "pre-norm weight", &bad);
  s.pre_eps = (float)loop_num(&a, 23);
  if (bad) return NULL;
  s.rows = NULL;
  napi_valuetype t;
  napi_typeof(env, a.v[20], &t);
  if (t != napi_null && t != napi_undefined) {
    size_t len = 0;
    napi_typedarray_type type;
    bool is = false;
    napi_is_typedarray(env, a.v[20], &is);
    if (is) napi_get_typedarray_info(env, a.v[20], &type, &len, NULL, NULL, NULL);
    s.rows = is && type == napi_int32_array ? loop_i32(&a, 20) : NULL;
    if (!s.rows || (long)len < s.n) {
      napi_throw_type_error(env, NULL, "mamba2Step: rows must be an Int32Array of n state rows");
      return NULL;
    }
    for (long j = 0; j < s.n; j++) {
      int dup = 0;
      for (long i = 0; i < j; i++) dup |= s.rows[i] == s.rows[j];
      if (s.rows[j] < 0 || s.rows[j] >= s.S || dup) {
        napi_throw_range_error(env, NULL,
                               "mamba2Step: rows must be distinct state rows in [0, S)");
        return NULL;
      }
    }
  } else if (s.n > s.S) {
    napi_throw_range_error(env, NULL, "mamba2Step: more input rows than state rows");
    return NULL;
  }
  if (s.n == 0) return NULL;
  float *buf =
      loop_keep(&scratch, &scratch_cap, (size_t)(s.n * (s.E + Di + D)) * sizeof(float));
  if (!buf) {
    napi_throw_error(env, NULL, "mamba2Step: out of memory");
    return NULL;
  }
  s.zx = buf;
  s.y = buf + s.n * s.E;
  s.un = s.y + s.n * Di;
  run_rows(&s, 0, s.n);
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "step", Step);
  loop_export(env, exports, "setThreads", loop_set_threads);
  return exports;
}
