/*
 * Native kernels of @loop/attention (RoPE, causal GQA attention forward and backward, SwiGLU),
 * compiled from source on the user's machine by src/node/index.ts through @loop/tensor/node
 * `buildNativeAddon`; never downloaded, never required. Each function is the C twin of the
 * portable raw-array kernel named beside it and is tested against it (src/node/*.test.ts).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "fast-math.h"
#include "napi-args.h"

static int n_threads = 1;

/* setThreads(n): threads used by every kernel of this addon from now on */
static napi_value SetThreads(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 1, "setThreads")) return NULL;
  long n = loop_long(&a, 0);
  n_threads = n < 1 ? 1 : (int)n;
  return NULL;
}

NAPI_MODULE_INIT() {
  loop_export(env, exports, "setThreads", SetThreads);
  return exports;
}
