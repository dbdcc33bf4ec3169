/*
 * The thread count of one native addon (each addon is one translation unit): its kernels run
 * OpenMP loops on `n_threads` threads, set from JavaScript through the exported `setThreads`
 * (@loop/tensor/node `threadSynced` keeps it equal to the thread pool's size).
 */
#ifndef LOOP_ADDON_THREADS_H
#define LOOP_ADDON_THREADS_H
#include "napi-args.h"

static int n_threads = 1;

/* setThreads(n): threads used by every kernel of this addon from now on (at least 1) */
static napi_value loop_set_threads(napi_env env, napi_callback_info info) {
  loop_args a;
  if (!loop_get_args(env, info, &a, 1, "setThreads")) return NULL;
  long n = loop_long(&a, 0);
  n_threads = n < 1 ? 1 : (int)n;
  return NULL;
}

#endif
