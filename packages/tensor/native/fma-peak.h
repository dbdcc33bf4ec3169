/*
 * The fp32 peak of this machine as the compiled code can reach it: every thread runs
 * independent chains of fused multiply-adds on the widest vectors the build targets
 * (-march=…: AVX-512, AVX2+FMA, NEON, else the compiler's generic vectors), and the flops done
 * each thread did are divided by that thread's own CPU time (CLOCK_THREAD_CPUTIME_ID) and summed.
 * CPU time, not wall time: on a machine shared with other jobs a thread that is descheduled for
 * a while would otherwise lower the figure, and the peak is a property of the cores, not of
 * their share. "% peak" in the benchmarks divides by this figure instead of one assumed from a
 * CPU name: clocks, turbo with n cores active, and 256-bit-wide AVX-512 pipes (Zen 4) all show
 * up in it.
 *
 * Twelve accumulators cover the FMA latency (4 cycles) × 2 pipes of current x86 and ARM cores
 * with registers to spare. acc ← acc·m + c with m just below 1 converges, so the values stay
 * normal (no denormal slow path) and finite however long the loop runs.
 */
#ifndef LOOP_FMA_PEAK_H
#define LOOP_FMA_PEAK_H
#include <omp.h>
#include <time.h>
#include "napi-args.h"

#define LOOP_FMA_CHAINS 12

#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 loop_fvec;
#define LOOP_FVEC_LANES 16
#define LOOP_FVEC_ISA "avx512f"
#define loop_fvec_set1 _mm512_set1_ps
#define loop_fvec_fma(a, b, c) _mm512_fmadd_ps(a, b, c)
#define loop_fvec_sum _mm512_reduce_add_ps
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256 loop_fvec;
#define LOOP_FVEC_LANES 8
#define LOOP_FVEC_ISA "avx2+fma"
#define loop_fvec_set1 _mm256_set1_ps
#define loop_fvec_fma(a, b, c) _mm256_fmadd_ps(a, b, c)
static inline float loop_fvec_sum(__m256 v) {
  float t[8];
  _mm256_storeu_ps(t, v);
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#elif defined(__ARM_NEON)
#include <arm_neon.h>
typedef float32x4_t loop_fvec;
#define LOOP_FVEC_LANES 4
#define LOOP_FVEC_ISA "neon"
#define loop_fvec_set1 vdupq_n_f32
#define loop_fvec_fma(a, b, c) vfmaq_f32(c, a, b)
#define loop_fvec_sum vaddvq_f32
#else
typedef float loop_fvec __attribute__((vector_size(16)));
#define LOOP_FVEC_LANES 4
#define LOOP_FVEC_ISA "generic"
static inline loop_fvec loop_fvec_set1(float x) { return (loop_fvec){x, x, x, x}; }
#define loop_fvec_fma(a, b, c) ((a) * (b) + (c))
static inline float loop_fvec_sum(loop_fvec v) { return v[0] + v[1] + v[2] + v[3]; }
#endif

/* One thread's chains: returns a value depending on every FMA, so none can be left out. */
static float loop_fma_chains(long iters, float seed) {
  loop_fvec acc[LOOP_FMA_CHAINS];
  const loop_fvec m = loop_fvec_set1(0.999999f), c = loop_fvec_set1(1e-3f);
  for (int i = 0; i < LOOP_FMA_CHAINS; i++) acc[i] = loop_fvec_set1(seed + (float)i);
  for (long k = 0; k < iters; k++) {
#pragma GCC unroll 12
    for (int i = 0; i < LOOP_FMA_CHAINS; i++) acc[i] = loop_fvec_fma(acc[i], m, c);
  }
  float s = 0;
  for (int i = 0; i < LOOP_FMA_CHAINS; i++) s += loop_fvec_sum(acc[i]);
  return s;
}

static double loop_thread_cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* fmaPeak(threads, iters) → GFLOP/s of `threads` threads each running `iters` rounds of the
 * chains (2 flops per lane per FMA): the sum over threads of flops / own CPU time. */
static napi_value loop_fma_peak(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 2, "fmaPeak")) return NULL;
  long threads = loop_long(&a, 0), iters = loop_long(&a, 1);
  if (threads < 1 || iters < 1) {
    napi_throw_range_error(env, NULL, "fmaPeak: threads and iters must be at least 1");
    return NULL;
  }
  const double flops = 2.0 * LOOP_FVEC_LANES * LOOP_FMA_CHAINS * (double)iters;
  volatile float sink = 0;
  double rate = 0;
#pragma omp parallel num_threads((int)threads) reduction(+ : rate)
  {
#pragma omp barrier
    const double t0 = loop_thread_cpu_seconds();
    float s = loop_fma_chains(iters, (float)omp_get_thread_num());
    const double t = loop_thread_cpu_seconds() - t0;
#pragma omp atomic
    sink += s;
    rate += t > 0 ? flops / t : 0.0;
  }
  napi_value out;
  napi_create_double(env, rate / 1e9, &out);
  return out;
}

/* vectorIsa() → the vector instructions this build uses ("avx512f", "avx2+fma", "neon", "generic") */
static napi_value loop_vector_isa(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_string_utf8(env, LOOP_FVEC_ISA, NAPI_AUTO_LENGTH, &out);
  return out;
}

#endif
