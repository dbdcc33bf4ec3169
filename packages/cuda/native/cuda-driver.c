/*
 * The CUDA backend's Node-API addon: the CUDA driver API (libcuda.so.1), NVRTC and cuBLASLt,
 * each opened with dlopen() at run time, so the addon builds with a plain C compiler and the
 * Node headers on any machine (no CUDA toolkit headers, no link against CUDA) and a machine
 * without a driver answers with one line naming what is missing instead of failing to load.
 *
 * Handles (modules, functions, read tickets) are small integers indexing tables here; device
 * pointers travel to JavaScript as doubles (CUdeviceptr values are below 2^53). Every call runs
 * on one stream; `launch` takes the kernel's parameters packed by the caller, 8 bytes per
 * parameter (a pointer, or an int32/float32 in the slot's first 4 bytes, little-endian).
 * Reads copy into page-locked memory on the stream and record an event; JavaScript polls the
 * event (`readDone`) so the event loop never blocks while a step runs. A read's page-locked
 * buffer and event belong to its ticket slot and are kept for the next read (allocating pinned
 * memory costs more than the copy of a small read). `waitWithin` is the one blocking wait, and
 * it has a time limit: a hung kernel is answered, not waited on for ever.
 */
#include <dlfcn.h>
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef LOOP_CHECK_CUDA_H
/* Type check only (a test compiles this with -fsyntax-only against the toolkit's cuda.h): the
 * prototypes below must be those of the driver's entry points that the table opens. */
#include <cuda.h>
typedef CUdevice_attribute loop_dev_attr;
typedef CUfunction_attribute loop_func_attr;
#else
typedef int loop_dev_attr; /* enums of the driver API: int-sized */
typedef int loop_func_attr;
typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;
typedef unsigned long long CUdeviceptr;
#endif

#define ERROR_NOT_READY 600
#define ERROR_NO_DEVICE 100
#define ATTR_CC_MAJOR 75
#define ATTR_CC_MINOR 76
#define ATTR_SM_COUNT 16
#define ATTR_SHARED_OPTIN 97
#define FUNC_ATTR_MAX_DYNAMIC_SHARED 8

static struct {
  void *lib;
  CUresult (*init)(unsigned);
  CUresult (*driverGetVersion)(int *);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, loop_dev_attr, CUdevice);
  CUresult (*deviceTotalMem)(size_t *, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*funcSetAttribute)(CUfunction, loop_func_attr, int);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void **, void **);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memAllocHost)(void **, size_t);
  CUresult (*memFreeHost)(void *);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*memsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventQuery)(CUevent);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*getErrorString)(CUresult, const char **);
} cu;

/* Every entry point: the field above and the driver's exported name (versioned where the
 * driver exports several versions: the one cuda.h maps the plain name to). */
#define CU_ENTRY_POINTS(X)                      \
  X(init, cuInit)                               \
  X(driverGetVersion, cuDriverGetVersion)       \
  X(deviceGetCount, cuDeviceGetCount)           \
  X(deviceGet, cuDeviceGet)                     \
  X(deviceGetName, cuDeviceGetName)             \
  X(deviceGetAttribute, cuDeviceGetAttribute)   \
  X(deviceTotalMem, cuDeviceTotalMem_v2)        \
  X(primaryCtxRetain, cuDevicePrimaryCtxRetain) \
  X(ctxSetCurrent, cuCtxSetCurrent)             \
  X(moduleLoadData, cuModuleLoadData)           \
  X(moduleGetFunction, cuModuleGetFunction)     \
  X(funcSetAttribute, cuFuncSetAttribute)       \
  X(launchKernel, cuLaunchKernel)               \
  X(memAlloc, cuMemAlloc_v2)                    \
  X(memFree, cuMemFree_v2)                      \
  X(memAllocHost, cuMemAllocHost_v2)            \
  X(memFreeHost, cuMemFreeHost)                 \
  X(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2)      \
  X(memcpyDtoHAsync, cuMemcpyDtoHAsync_v2)      \
  X(memcpyDtoDAsync, cuMemcpyDtoDAsync_v2)      \
  X(memsetD8Async, cuMemsetD8Async)             \
  X(streamCreate, cuStreamCreate)               \
  X(eventCreate, cuEventCreate)                 \
  X(eventRecord, cuEventRecord)                 \
  X(eventQuery, cuEventQuery)                   \
  X(eventDestroy, cuEventDestroy_v2)            \
  X(getErrorString, cuGetErrorString)

#ifdef LOOP_CHECK_CUDA_H
#define LOOP_ASSIGN(field, symbol) cu.field = symbol;
void loop_check_prototypes(void) { CU_ENTRY_POINTS(LOOP_ASSIGN) }
#endif

static CUcontext ctx;
static CUstream stream;
static CUdevice dev;

#define MAX_MODULES 64
#define MAX_FUNCTIONS 1024
#define MAX_TICKETS 256
static CUmodule modules[MAX_MODULES];
static int nModules;
static CUfunction functions[MAX_FUNCTIONS];
static int nFunctions;
static struct {
  void *host;      /* page-locked, kept between reads (grown when a read needs more) */
  size_t capacity; /* bytes at host */
  size_t bytes;    /* this read's */
  CUevent event;   /* kept between reads */
  int used;
} tickets[MAX_TICKETS];

/* The first n arguments of a call as a[0..n-1] (argc: how many the caller passed). */
#define ARGS(n)    \
  size_t argc = n;  \
  napi_value a[n];  \
  napi_get_cb_info(env, info, &argc, a, NULL, NULL)

static napi_value fail(napi_env env, const char *msg) {
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static const char *cuError(CUresult r) {
  const char *s = NULL;
  if (cu.getErrorString && cu.getErrorString(r, &s) == 0 && s) return s;
  return "unknown CUDA error";
}

/* Throw "<what>: <CUDA's message> (code)" and return 0 when r is an error. */
static int check(napi_env env, CUresult r, const char *what) {
  if (r == 0) return 1;
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s (CUDA error %d)", what, cuError(r), r);
  napi_throw_error(env, NULL, msg);
  return 0;
}

static double argDouble(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

static int argInt(napi_env env, napi_value v) {
  int32_t i = 0;
  napi_get_value_int32(env, v, &i);
  return i;
}

/* The bytes of a typed array or Buffer argument. */
static void *argBytes(napi_env env, napi_value v, size_t *bytes) {
  bool is = false;
  napi_is_typedarray(env, v, &is);
  if (is) {
    napi_typedarray_type type;
    size_t length, offset;
    void *data;
    napi_value ab;
    napi_get_typedarray_info(env, v, &type, &length, &data, &ab, &offset);
    size_t el = type == napi_float64_array || type == napi_bigint64_array ||
                        type == napi_biguint64_array
                    ? 8
                : type == napi_float32_array || type == napi_int32_array ||
                        type == napi_uint32_array
                    ? 4
                : type == napi_int16_array || type == napi_uint16_array ? 2
                                                                        : 1;
    *bytes = length * el;
    return data;
  }
  *bytes = 0;
  return NULL;
}

static napi_value num(napi_env env, double d) {
  napi_value v;
  napi_create_double(env, d, &v);
  return v;
}

static void setNum(napi_env env, napi_value o, const char *k, double d) {
  napi_set_named_property(env, o, k, num(env, d));
}

/* One entry point of a library opened at run time: where its address goes, and its name. */
struct symRow {
  void **slot;
  const char *name;
};

/* Resolve every row's entry point in `lib`: NULL when all are there, else the first missing. */
static const char *resolve(void *lib, const struct symRow *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    *rows[i].slot = dlsym(lib, rows[i].name);
    if (!*rows[i].slot) return rows[i].name;
  }
  return NULL;
}
#define ROWS(table) (sizeof table / sizeof table[0])

/* dlopen `path` and resolve every row of `table` in it: the library, or NULL with the one-line
 * reason in `why` (`lacks` names what a missing entry point means). NVRTC and cuBLASLt open so. */
static void *openLibrary(const char *path, const struct symRow *table, size_t n, const char *lacks,
                         char *why, size_t whySize) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, whySize, "%s could not be opened (%s)", path, dlerror());
    return NULL;
  }
  if (resolve(lib, table, n)) {
    snprintf(why, whySize, "%s lacks %s", path, lacks);
    dlclose(lib);
    return NULL;
  }
  return lib;
}

/* Open libcuda.so.1 (or `path`) and resolve every entry point; a one-line reason on failure. */
static const char *loadDriver(const char *path) {
  if (cu.lib) return NULL;
  static char why[1600];
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, sizeof why, "no CUDA driver: %s could not be opened (%s)", path, dlerror());
    return why;
  }
#define CU_ROW(field, symbol) {(void **)&cu.field, #symbol},
  const struct symRow table[] = {CU_ENTRY_POINTS(CU_ROW)};
  const char *missing = resolve(lib, table, ROWS(table));
  if (missing) {
    snprintf(why, sizeof why, "the CUDA driver %s lacks %s (driver too old)", path, missing);
    dlclose(lib);
    memset(&cu, 0, sizeof cu);
    return why;
  }
  cu.lib = lib;
  return NULL;
}

/* driverOpen(path) → "" when the driver library opened with every entry point, else the
 * reason (JavaScript tries the candidates in turn: the loader's libcuda.so.1, then folders). */
static napi_value driverOpen(napi_env env, napi_callback_info info) {
  ARGS(1);
  char path[1024];
  size_t len = 0;
  napi_get_value_string_utf8(env, a[0], path, sizeof path, &len);
  const char *why = loadDriver(path);
  napi_value out;
  napi_create_string_utf8(env, why ? why : "", NAPI_AUTO_LENGTH, &out);
  return out;
}

/* start(ordinal) → { name, major, minor, sms, memory, driver }; throws one line. */
static napi_value start(napi_env env, napi_callback_info info) {
  ARGS(1);
  int ordinal = argInt(env, a[0]);
  if (!cu.lib) return fail(env, "no CUDA driver: none was opened (driverOpen)");
  if (!ctx) {
    CUresult r = cu.init(0);
    if (r == ERROR_NO_DEVICE) return fail(env, "no CUDA GPU: the driver sees no device (cuInit: no device)");
    if (!check(env, r, "cuInit")) return NULL;
    int count = 0;
    if (!check(env, cu.deviceGetCount(&count), "cuDeviceGetCount")) return NULL;
    if (ordinal < 0 || ordinal >= count) {
      char msg[128];
      snprintf(msg, sizeof msg, "no CUDA GPU %d: the driver sees %d", ordinal, count);
      return fail(env, msg);
    }
    if (!check(env, cu.deviceGet(&dev, ordinal), "cuDeviceGet")) return NULL;
    /* the device's primary context: the one the runtime and the CUDA libraries use too */
    if (!check(env, cu.primaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain")) return NULL;
    if (!check(env, cu.ctxSetCurrent(ctx), "cuCtxSetCurrent")) return NULL;
    if (!check(env, cu.streamCreate(&stream, 1 /* non-blocking */), "cuStreamCreate")) return NULL;
  }
  char name[256] = {0};
  int major = 0, minor = 0, sms = 0, driver = 0, optin = 0;
  size_t mem = 0;
  cu.deviceGetName(name, sizeof name - 1, dev);
  cu.deviceGetAttribute(&major, ATTR_CC_MAJOR, dev);
  cu.deviceGetAttribute(&minor, ATTR_CC_MINOR, dev);
  cu.deviceGetAttribute(&sms, ATTR_SM_COUNT, dev);
  cu.deviceGetAttribute(&optin, ATTR_SHARED_OPTIN, dev);
  cu.deviceTotalMem(&mem, dev);
  cu.driverGetVersion(&driver);
  napi_value o, s;
  napi_create_object(env, &o);
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &s);
  napi_set_named_property(env, o, "name", s);
  setNum(env, o, "major", major);
  setNum(env, o, "minor", minor);
  setNum(env, o, "sms", sms);
  setNum(env, o, "memory", (double)mem);
  setNum(env, o, "driver", driver);
  setNum(env, o, "sharedOptin", optin);
  return o;
}

static int ready(napi_env env) {
  if (ctx) return 1;
  napi_throw_error(env, NULL, "cuda: the device was not started");
  return 0;
}

/* alloc(bytes) → device pointer */
static napi_value alloc(napi_env env, napi_callback_info info) {
  ARGS(1);
  if (!ready(env)) return NULL;
  CUdeviceptr p = 0;
  size_t bytes = (size_t)argDouble(env, a[0]);
  if (!check(env, cu.memAlloc(&p, bytes ? bytes : 4), "cuMemAlloc")) return NULL;
  return num(env, (double)p);
}

static napi_value release(napi_env env, napi_callback_info info) {
  ARGS(1);
  if (!ready(env)) return NULL;
  check(env, cu.memFree((CUdeviceptr)argDouble(env, a[0])), "cuMemFree");
  return NULL;
}

/* upload(ptr, typedArray): the copy is staged by the driver, so the array may change after. */
static napi_value upload(napi_env env, napi_callback_info info) {
  ARGS(2);
  if (!ready(env)) return NULL;
  size_t bytes;
  void *data = argBytes(env, a[1], &bytes);
  if (!data && bytes) return fail(env, "cuda upload: expected a typed array");
  /* pageable source: the driver copies it out before the call returns */
  check(env, cu.memcpyHtoDAsync((CUdeviceptr)argDouble(env, a[0]), data, bytes, stream),
        "cuMemcpyHtoD");
  return NULL;
}

/* zero(ptr, bytes), copy(dst, src, bytes): enqueued on the stream. */
static napi_value zero(napi_env env, napi_callback_info info) {
  ARGS(2);
  if (!ready(env)) return NULL;
  check(env,
        cu.memsetD8Async((CUdeviceptr)argDouble(env, a[0]), 0, (size_t)argDouble(env, a[1]),
                         stream),
        "cuMemsetD8");
  return NULL;
}

static napi_value copy(napi_env env, napi_callback_info info) {
  ARGS(3);
  if (!ready(env)) return NULL;
  check(env,
        cu.memcpyDtoDAsync((CUdeviceptr)argDouble(env, a[0]), (CUdeviceptr)argDouble(env, a[1]),
                           (size_t)argDouble(env, a[2]), stream),
        "cuMemcpyDtoD");
  return NULL;
}

/* readStart(ptr, bytes) → ticket: a copy into page-locked memory and an event after it. */
static napi_value readStart(napi_env env, napi_callback_info info) {
  ARGS(2);
  if (!ready(env)) return NULL;
  int t = 0;
  while (t < MAX_TICKETS && tickets[t].used) t++;
  if (t == MAX_TICKETS) return fail(env, "cuda: too many reads in flight");
  size_t bytes = (size_t)argDouble(env, a[1]);
  size_t need = bytes ? bytes : 4;
  if (tickets[t].capacity < need) {
    /* grow the slot's staging buffer (never shrunk: the same reads come back every step) */
    if (tickets[t].host) cu.memFreeHost(tickets[t].host);
    tickets[t].host = NULL;
    tickets[t].capacity = 0;
    if (!check(env, cu.memAllocHost(&tickets[t].host, need), "cuMemAllocHost")) return NULL;
    tickets[t].capacity = need;
  }
  if (!tickets[t].event &&
      !check(env, cu.eventCreate(&tickets[t].event, 2 /* disable timing */), "cuEventCreate"))
    return NULL;
  if (!check(env,
             cu.memcpyDtoHAsync(tickets[t].host, (CUdeviceptr)argDouble(env, a[0]), bytes, stream),
             "cuMemcpyDtoH"))
    return NULL;
  if (!check(env, cu.eventRecord(tickets[t].event, stream), "cuEventRecord")) return NULL;
  tickets[t].bytes = bytes;
  tickets[t].used = 1;
  return num(env, t);
}

/* readDone(ticket) → whether the copy has landed (throws on a device error). */
static napi_value readDone(napi_env env, napi_callback_info info) {
  ARGS(1);
  int t = argInt(env, a[0]);
  if (t < 0 || t >= MAX_TICKETS || !tickets[t].used) return fail(env, "cuda: unknown read");
  CUresult r = cu.eventQuery(tickets[t].event);
  napi_value b;
  if (r == ERROR_NOT_READY) {
    napi_get_boolean(env, false, &b);
    return b;
  }
  if (r != 0) {
    /* the slot is free again (its buffer and event stay for the next read) */
    tickets[t].used = 0;
    if (!check(env, r, "the GPU failed before this read")) return NULL;
  }
  napi_get_boolean(env, true, &b);
  return b;
}

/* readTake(ticket, typedArray): copy the landed bytes out and free the ticket. */
static napi_value readTake(napi_env env, napi_callback_info info) {
  ARGS(2);
  int t = argInt(env, a[0]);
  if (t < 0 || t >= MAX_TICKETS || !tickets[t].used) return fail(env, "cuda: unknown read");
  size_t bytes;
  void *data = argBytes(env, a[1], &bytes);
  memcpy(data, tickets[t].host, bytes < tickets[t].bytes ? bytes : tickets[t].bytes);
  tickets[t].used = 0;
  return NULL;
}

/* readCancel(ticket): give up on a read (its wait timed out). The slot's buffer and event are
 * kept only when the copy is known to be done, else dropped (the copy may still land there). */
static napi_value readCancel(napi_env env, napi_callback_info info) {
  ARGS(1);
  int t = argInt(env, a[0]);
  if (t < 0 || t >= MAX_TICKETS || !tickets[t].used) return NULL;
  if (cu.eventQuery(tickets[t].event) == ERROR_NOT_READY) {
    tickets[t].host = NULL; /* leaked on purpose: a late copy must not land in a reused buffer */
    tickets[t].capacity = 0;
    tickets[t].event = NULL;
  }
  tickets[t].used = 0;
  return NULL;
}

static double nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* waitWithin(ms) → true when everything enqueued so far has run, false when it had not after
 * `ms` milliseconds; throws the GPU's error. An event after the stream's work is polled (not
 * cuStreamSynchronize, which has no time limit). */
static napi_value waitWithin(napi_env env, napi_callback_info info) {
  ARGS(1);
  if (!ready(env)) return NULL;
  double limit = argDouble(env, a[0]);
  static CUevent ev;
  if (!ev && !check(env, cu.eventCreate(&ev, 2 /* disable timing */), "cuEventCreate"))
    return NULL;
  if (!check(env, cu.eventRecord(ev, stream), "cuEventRecord")) return NULL;
  double t0 = nowMs();
  struct timespec nap = {0, 20000}; /* 20 µs: a launch's work is rarely shorter */
  napi_value b;
  for (;;) {
    CUresult r = cu.eventQuery(ev);
    if (r == 0) break;
    if (r != ERROR_NOT_READY) {
      check(env, r, "the GPU failed");
      return NULL;
    }
    if (nowMs() - t0 > limit) {
      napi_get_boolean(env, false, &b);
      return b;
    }
    nanosleep(&nap, NULL);
  }
  napi_get_boolean(env, true, &b);
  return b;
}


/* loadModule(image: Uint8Array) → module index (a cubin, fatbin or PTX image). */
static napi_value loadModule(napi_env env, napi_callback_info info) {
  ARGS(1);
  if (!ready(env)) return NULL;
  if (nModules == MAX_MODULES) return fail(env, "cuda: too many modules");
  size_t bytes;
  void *image = argBytes(env, a[0], &bytes);
  CUmodule m;
  if (!check(env, cu.moduleLoadData(&m, image), "cuModuleLoadData")) return NULL;
  modules[nModules] = m;
  return num(env, nModules++);
}

/* getFunction(module, name, dynamicSharedBytes) → function index. */
static napi_value getFunction(napi_env env, napi_callback_info info) {
  ARGS(3);
  if (!ready(env)) return NULL;
  int m = argInt(env, a[0]);
  char name[256];
  size_t len;
  napi_get_value_string_utf8(env, a[1], name, sizeof name, &len);
  if (m < 0 || m >= nModules) return fail(env, "cuda: unknown module");
  if (nFunctions == MAX_FUNCTIONS) return fail(env, "cuda: too many functions");
  CUfunction f;
  char what[300];
  snprintf(what, sizeof what, "cuModuleGetFunction(%s)", name);
  if (!check(env, cu.moduleGetFunction(&f, modules[m], name), what)) return NULL;
  int shared = argInt(env, a[2]), optin = 0;
  /* no more than the device lets a block opt in to (99 KiB on sm_86/89, 163 on sm_80, 227 on sm_90) */
  cu.deviceGetAttribute(&optin, ATTR_SHARED_OPTIN, dev);
  if (optin > 0 && shared > optin) shared = optin;
  /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: above 48 KiB needs the opt-in */
  if (shared > 48 * 1024 &&
      !check(env, cu.funcSetAttribute(f, FUNC_ATTR_MAX_DYNAMIC_SHARED, shared), what))
    return NULL;
  functions[nFunctions] = f;
  return num(env, nFunctions++);
}

/* launch(fn, gx, gy, gz, bx, by, bz, sharedBytes, params: Uint8Array (8 bytes each)). */
static napi_value launch(napi_env env, napi_callback_info info) {
  ARGS(9);
  if (argc != 9) return fail(env, "cuda launch: expected 9 arguments");
  int f = argInt(env, a[0]);
  if (f < 0 || f >= nFunctions) return fail(env, "cuda: unknown function");
  size_t bytes;
  uint8_t *params = argBytes(env, a[8], &bytes);
  void *ptrs[64];
  size_t n = bytes / 8;
  if (n > 64) return fail(env, "cuda launch: more than 64 parameters");
  for (size_t i = 0; i < n; i++) ptrs[i] = params + 8 * i;
  check(env,
        cu.launchKernel(functions[f], argInt(env, a[1]), argInt(env, a[2]), argInt(env, a[3]),
                        argInt(env, a[4]), argInt(env, a[5]), argInt(env, a[6]),
                        argInt(env, a[7]), stream, ptrs, NULL),
        "cuLaunchKernel");
  return NULL;
}

/* ---- NVRTC: CUDA C → cubin in this process, where no nvcc is installed ---- */
typedef int nvrtcResult;
typedef void *nvrtcProgram;
static struct {
  void *lib;
  nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                        const char *const *);
  nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*logSize)(nvrtcProgram, size_t *);
  nvrtcResult (*log)(nvrtcProgram, char *);
  nvrtcResult (*cubinSize)(nvrtcProgram, size_t *);
  nvrtcResult (*cubin)(nvrtcProgram, char *);
  nvrtcResult (*destroy)(nvrtcProgram *);
} rtc;
/* Every entry point: the field above and NVRTC's exported name. */
#define NVRTC_ENTRY_POINTS(X)            \
  X(create, nvrtcCreateProgram)          \
  X(compile, nvrtcCompileProgram)        \
  X(logSize, nvrtcGetProgramLogSize)     \
  X(log, nvrtcGetProgramLog)             \
  X(cubinSize, nvrtcGetCUBINSize)        \
  X(cubin, nvrtcGetCUBIN)                \
  X(destroy, nvrtcDestroyProgram)

/* nvrtcOpen(path) → "" when NVRTC is usable, else the reason. */
static napi_value nvrtcOpen(napi_env env, napi_callback_info info) {
  ARGS(1);
  napi_value out;
  char path[1024], why[1600] = "";
  size_t len;
  napi_get_value_string_utf8(env, a[0], path, sizeof path, &len);
  if (!rtc.lib) {
#define RTC_ROW(field, symbol) {(void **)&rtc.field, #symbol},
    const struct symRow table[] = {NVRTC_ENTRY_POINTS(RTC_ROW)};
    /* whichever is missing, named as nvrtcGetCUBIN: the newest of them, the likely cause */
    rtc.lib = openLibrary(path, table, ROWS(table), "nvrtcGetCUBIN (NVRTC older than 11.1)", why,
                          sizeof why);
  }
  napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &out);
  return out;
}

/* nvrtcCompile(source, name, options: string[]) → cubin (Uint8Array); throws the log. */
static napi_value nvrtcCompile(napi_env env, napi_callback_info info) {
  ARGS(3);
  if (!rtc.lib) return fail(env, "NVRTC is not open");
  size_t srcLen;
  napi_get_value_string_utf8(env, a[0], NULL, 0, &srcLen);
  char *src = malloc(srcLen + 1);
  napi_get_value_string_utf8(env, a[0], src, srcLen + 1, &srcLen);
  char name[256];
  size_t len;
  napi_get_value_string_utf8(env, a[1], name, sizeof name, &len);
  uint32_t nopt = 0;
  napi_get_array_length(env, a[2], &nopt);
  if (nopt > 32) nopt = 32;
  char *opts[32];
  for (uint32_t i = 0; i < nopt; i++) {
    napi_value o;
    napi_get_element(env, a[2], i, &o);
    opts[i] = malloc(1024);
    napi_get_value_string_utf8(env, o, opts[i], 1024, &len);
  }
  nvrtcProgram prog = NULL;
  napi_value result = NULL;
  if (rtc.create(&prog, src, name, 0, NULL, NULL) != 0) {
    fail(env, "nvrtcCreateProgram failed");
  } else if (rtc.compile(prog, (int)nopt, (const char *const *)opts) != 0) {
    size_t n = 0;
    rtc.logSize(prog, &n);
    char *log = malloc(n + 300);
    snprintf(log, 300, "NVRTC could not compile %s: ", name);
    rtc.log(prog, log + strlen(log));
    fail(env, log);
    free(log);
  } else {
    size_t n = 0;
    rtc.cubinSize(prog, &n);
    void *data;
    napi_value ab;
    napi_create_arraybuffer(env, n, &data, &ab);
    rtc.cubin(prog, data);
    napi_create_typedarray(env, napi_uint8_array, n, ab, 0, &result);
  }
  if (prog) rtc.destroy(&prog);
  for (uint32_t i = 0; i < nopt; i++) free(opts[i]);
  free(src);
  return result;
}

/* ---- cuBLASLt: the GEMM where the library is found ---- */
typedef int cublasStatus_t;
typedef void *cublasLtHandle_t;
typedef void *cublasLtMatmulDesc_t;
typedef void *cublasLtMatrixLayout_t;
static struct {
  void *lib;
  cublasLtHandle_t handle;
  cublasStatus_t (*create)(cublasLtHandle_t *);
  cublasStatus_t (*descCreate)(cublasLtMatmulDesc_t *, int, int);
  cublasStatus_t (*descDestroy)(cublasLtMatmulDesc_t);
  cublasStatus_t (*descSet)(cublasLtMatmulDesc_t, int, const void *, size_t);
  cublasStatus_t (*layoutCreate)(cublasLtMatrixLayout_t *, int, uint64_t, uint64_t, int64_t);
  cublasStatus_t (*layoutDestroy)(cublasLtMatrixLayout_t);
  cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
                           cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t,
                           const void *, const void *, cublasLtMatrixLayout_t, void *,
                           cublasLtMatrixLayout_t, const void *, void *, size_t, CUstream);
} lt;
/* Every entry point: the field above and cuBLASLt's exported name. */
#define BLASLT_ENTRY_POINTS(X)                   \
  X(create, cublasLtCreate)                      \
  X(descCreate, cublasLtMatmulDescCreate)        \
  X(descDestroy, cublasLtMatmulDescDestroy)      \
  X(descSet, cublasLtMatmulDescSetAttribute)     \
  X(layoutCreate, cublasLtMatrixLayoutCreate)    \
  X(layoutDestroy, cublasLtMatrixLayoutDestroy)  \
  X(matmul, cublasLtMatmul)
static CUdeviceptr ltWorkspace;
#define LT_WORKSPACE (32u << 20)

/* blasLtOpen(path) → "" when cuBLASLt is usable, else the reason. */
static napi_value blasLtOpen(napi_env env, napi_callback_info info) {
  ARGS(1);
  napi_value out;
  char path[1024], why[1600] = "";
  size_t len;
  napi_get_value_string_utf8(env, a[0], path, sizeof path, &len);
  if (!ready(env)) return NULL;
  if (!lt.lib) {
#define LT_ROW(field, symbol) {(void **)&lt.field, #symbol},
    const struct symRow table[] = {BLASLT_ENTRY_POINTS(LT_ROW)};
    void *lib = openLibrary(path, table, ROWS(table), "the cublasLt matmul entry points", why,
                            sizeof why);
    if (lib) {
      if (lt.create(&lt.handle) != 0) {
        snprintf(why, sizeof why, "cublasLtCreate failed");
        dlclose(lib);
      } else if (cu.memAlloc(&ltWorkspace, LT_WORKSPACE) != 0) {
        snprintf(why, sizeof why, "no device memory for the cuBLASLt workspace");
        dlclose(lib);
      } else {
        lt.lib = lib;
      }
    }
  }
  napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &out);
  return out;
}

#define BLAS_NOT_SUPPORTED 15

/* cublasStatus_t's names (cublas_api.h), for the one-line error. */
static const char *blasStatusName(int st) {
  switch (st) {
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    case -1: return "a matmul descriptor or layout could not be made";
    default: return "unknown cuBLAS status";
  }
}

/*
 * blasLtGemm(transA, transB, M, N, K, alpha, A, B, beta, C, abType, compute) → 0 when it ran,
 * 15 (CUBLAS_STATUS_NOT_SUPPORTED: no algorithm for this shape and layout, the caller's own
 * kernel computes it); any other status is thrown (a fault is never mistaken for "no algorithm"):
 * C[M,N] (row-major, fp32) = alpha·op(A)·op(B) + beta·C, A row-major [M,K] (or [K,M] when
 * transA), B [K,N] (or [N,K] when transB); abType 0 = fp32, 14 = bf16 (cudaDataType);
 * compute 68 = CUBLAS_COMPUTE_32F, 77 = 32F_FAST_TF32. Row-major C is column-major Cᵀ =
 * op(B)ᵀ·op(A)ᵀ, so B is passed as cuBLASLt's first operand.
 */
static napi_value blasLtGemm(napi_env env, napi_callback_info info) {
  ARGS(12);
  if (!lt.lib) return fail(env, "cuBLASLt is not open");
  int tA = argInt(env, a[0]), tB = argInt(env, a[1]);
  uint64_t M = (uint64_t)argDouble(env, a[2]), N = (uint64_t)argDouble(env, a[3]),
           K = (uint64_t)argDouble(env, a[4]);
  float alpha = (float)argDouble(env, a[5]), beta = (float)argDouble(env, a[8]);
  CUdeviceptr A = (CUdeviceptr)argDouble(env, a[6]), B = (CUdeviceptr)argDouble(env, a[7]),
              C = (CUdeviceptr)argDouble(env, a[9]);
  int abType = argInt(env, a[10]), compute = argInt(env, a[11]);
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t lx = NULL, ly = NULL, lc = NULL;
  int opX = tB ? 1 : 0, opY = tA ? 1 : 0;
  int ok = lt.descCreate(&desc, compute, 0 /* CUDA_R_32F scale */) == 0 &&
           lt.descSet(desc, 3 /* TRANSA */, &opX, sizeof opX) == 0 &&
           lt.descSet(desc, 4 /* TRANSB */, &opY, sizeof opY) == 0 &&
           (tB ? lt.layoutCreate(&lx, abType, K, N, (int64_t)K)
               : lt.layoutCreate(&lx, abType, N, K, (int64_t)N)) == 0 &&
           (tA ? lt.layoutCreate(&ly, abType, M, K, (int64_t)M)
               : lt.layoutCreate(&ly, abType, K, M, (int64_t)K)) == 0 &&
           lt.layoutCreate(&lc, 0, N, M, (int64_t)N) == 0;
  cublasStatus_t st = ok ? lt.matmul(lt.handle, desc, &alpha, (void *)B, lx, (void *)A, ly, &beta,
                                     (void *)C, lc, (void *)C, lc, NULL, (void *)ltWorkspace,
                                     LT_WORKSPACE, stream)
                         : -1;
  if (lc) lt.layoutDestroy(lc);
  if (ly) lt.layoutDestroy(ly);
  if (lx) lt.layoutDestroy(lx);
  if (desc) lt.descDestroy(desc);
  if (st != 0 && st != BLAS_NOT_SUPPORTED) {
    char msg[200];
    snprintf(msg, sizeof msg, "cublasLtMatmul %llux%llux%llu failed: %s (status %d)",
             (unsigned long long)M, (unsigned long long)N, (unsigned long long)K,
             blasStatusName(st), st);
    return fail(env, msg);
  }
  return num(env, st);
}

#define FN(name) {#name, NULL, name, NULL, NULL, NULL, napi_default, NULL}
static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      FN(driverOpen),  FN(start),      FN(alloc),    FN(release),    FN(upload),
      FN(zero),        FN(copy),       FN(readStart), FN(readDone),  FN(readTake),
      FN(readCancel),  FN(waitWithin),
      FN(loadModule),  FN(getFunction), FN(launch),  FN(nvrtcOpen),  FN(nvrtcCompile),
      FN(blasLtOpen),  FN(blasLtGemm),
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
