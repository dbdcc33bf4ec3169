/*
 * Argument helpers shared by the native kernel addons of looplm (compiled from source by
 * @loop/tensor/node `buildNativeAddon`). Every exported function takes plain numbers and
 * Float32Arrays (null where an output is not wanted); the JavaScript wrappers check shapes,
 * so these helpers only convert.
 */
#ifndef LOOP_NAPI_ARGS_H
#define LOOP_NAPI_ARGS_H
#include <node_api.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LOOP_MAX_ARGS 28

typedef struct {
  napi_env env;
  size_t argc;
  napi_value v[LOOP_MAX_ARGS];
} loop_args;

static inline int loop_get_args(napi_env env, napi_callback_info info, loop_args *a, size_t want,
                                const char *name) {
  a->env = env;
  a->argc = LOOP_MAX_ARGS;
  napi_get_cb_info(env, info, &a->argc, a->v, NULL, NULL);
  if (a->argc != want) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected %zu arguments, got %zu", name, want, a->argc);
    napi_throw_error(env, NULL, msg);
    return 0;
  }
  return 1;
}

/* loop_get_args for kernels whose last `optional` arguments may be left out: want − optional to
 * want arguments (N-API reads the missing ones as undefined, which optional checked arguments
 * take as NULL). */
static inline int loop_get_args_opt(napi_env env, napi_callback_info info, loop_args *a,
                                    size_t want, size_t optional, const char *name) {
  a->env = env;
  a->argc = LOOP_MAX_ARGS;
  napi_get_cb_info(env, info, &a->argc, a->v, NULL, NULL);
  if (a->argc > want || a->argc + optional < want) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected %zu to %zu arguments, got %zu", name, want - optional,
             want, a->argc);
    napi_throw_error(env, NULL, msg);
    return 0;
  }
  return 1;
}

/* Float32Array data (adjusted by its byte offset), or NULL for null/undefined/other types. */
/* data of typed array argument i when it is of `type` (adjusted by its byte offset), else NULL */
static inline void *loop_typed(loop_args *a, size_t i, napi_typedarray_type type) {
  napi_valuetype t;
  napi_typeof(a->env, a->v[i], &t);
  if (t != napi_object) return NULL;
  bool is;
  napi_is_typedarray(a->env, a->v[i], &is);
  if (!is) return NULL;
  napi_typedarray_type got;
  size_t len;
  void *data;
  napi_get_typedarray_info(a->env, a->v[i], &got, &len, &data, NULL, NULL);
  return got == type ? data : NULL;
}

static inline float *loop_f32(loop_args *a, size_t i) {
  return (float *)loop_typed(a, i, napi_float32_array);
}

static inline double loop_num(loop_args *a, size_t i) {
  double d = 0;
  napi_get_value_double(a->env, a->v[i], &d);
  return d;
}

static inline long loop_long(loop_args *a, size_t i) { return (long)loop_num(a, i); }

static inline int loop_bool(loop_args *a, size_t i) {
  bool b = false;
  napi_get_value_bool(a->env, a->v[i], &b);
  return b;
}

/* Float64Array / Int32Array data (adjusted by its byte offset), or NULL for anything else. */
static inline double *loop_f64(loop_args *a, size_t i) {
  return (double *)loop_typed(a, i, napi_float64_array);
}

static inline int32_t *loop_i32(loop_args *a, size_t i) {
  return (int32_t *)loop_typed(a, i, napi_int32_array);
}

/*
 * Checked Float32Array argument i holding at least `need` elements, for kernels that validate
 * their arguments: optional ones may be null or undefined (→ NULL); NULL for an empty array.
 * On a wrong type or a short array it throws a TypeError / RangeError naming `fn` and `what`,
 * sets *bad and returns NULL; once *bad is set it returns NULL at once (check *bad after the
 * last argument).
 */
static inline float *loop_arg_f32(loop_args *a, size_t i, size_t need, int optional,
                                  const char *fn, const char *what, int *bad) {
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
  snprintf(msg, sizeof msg, "%s: %s must be a Float32Array%s", fn, what,
           optional ? " or null" : "");
  napi_throw_type_error(a->env, NULL, msg);
  *bad = 1;
  return NULL;
}

static inline void loop_export(napi_env env, napi_value exports, const char *name,
                               napi_callback fn) {
  napi_value f;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, NULL, &f);
  napi_set_named_property(env, exports, name, f);
}

#endif
