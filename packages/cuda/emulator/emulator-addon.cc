/*
 * The emulated CUDA device as a Node-API addon (tests on machines without a GPU): memory is
 * host memory, a launch runs the kernel's blocks one after another on the host, each block's
 * threads as OS threads (cuda-emulator.h). The build (src/node/emulated-device.ts) compiles
 * this file with the kernels' unit included as "kernels-unit.inc" and the dispatch table as
 * "kernels-dispatch.inc" (one `LOOP_KERNEL(name)` per kernel).
 */
#include <node_api.h>

#include <cstdio>
#include <cstdlib>
#include <ucontext.h>

#include <string>
#include <unordered_map>
#include <utility>

#include "cuda-emulator.h"
#include "kernels-unit.inc"

namespace {

template <class T>
T arg(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class... A, size_t... I>
void call(void (*f)(A...), const uint8_t *p, std::index_sequence<I...>) {
  f(arg<A>(p + 8 * I)...);
}

template <class... A>
void invoke(void (*f)(A...), const uint8_t *p) {
  call(f, p, std::index_sequence_for<A...>{});
}

using Entry = void (*)(const uint8_t *);
#define LOOP_KERNEL(name) {#name, [](const uint8_t *p) { invoke(name, p); }},
const std::unordered_map<std::string, Entry> kernels = {
#include "kernels-dispatch.inc"
};

/* The threads of a block as fibers on this thread: each runs until it waits at a barrier or
 * ends, then the next one runs (round robin). Stacks are kept between blocks. */
constexpr size_t STACK = 256 * 1024;
struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack{new char[STACK]};
  bool done = false;
};
std::vector<std::unique_ptr<Fiber>> fibers;
ucontext_t scheduler;
Fiber *current = nullptr;
Entry currentFn = nullptr;
const uint8_t *currentParams = nullptr;

void fiberMain() {
  Fiber *self = current;
  unsigned t = loop_emu::t_thread.x;
  currentFn(currentParams);
  loop_emu::drop(loop_emu::g_block->warps[t / 32]);
  loop_emu::drop(loop_emu::g_block->block);
  self->done = true;
  swapcontext(&self->context, &scheduler);
}

void runBlock(unsigned threads) {
  while (fibers.size() < threads) fibers.push_back(std::make_unique<Fiber>());
  for (unsigned t = 0; t < threads; t++) {
    Fiber &f = *fibers[t];
    f.done = false;
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack.get();
    f.context.uc_stack.ss_size = STACK;
    f.context.uc_link = &scheduler;
    makecontext(&f.context, fiberMain, 0);
  }
  for (unsigned left = threads; left > 0;) {
    left = 0;
    for (unsigned t = 0; t < threads; t++) {
      Fiber &f = *fibers[t];
      if (f.done) continue;
      current = &f;
      loop_emu::t_thread = dim3{t, 0, 0};
      swapcontext(&scheduler, &f.context);
      if (!f.done) left++;
    }
  }
}

}  // namespace

void loop_emu::yield() {
  Fiber *self = current;
  swapcontext(&self->context, &scheduler);
}

namespace {

double num(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

void *bytesOf(napi_env env, napi_value v, size_t *n) {
  napi_typedarray_type type;
  size_t length, offset;
  void *data;
  napi_value ab;
  napi_get_typedarray_info(env, v, &type, &length, &data, &ab, &offset);
  size_t el = type == napi_float64_array || type == napi_bigint64_array ? 8
              : type == napi_float32_array || type == napi_int32_array || type == napi_uint32_array
                  ? 4
              : type == napi_int16_array || type == napi_uint16_array ? 2
                                                                      : 1;
  *n = length * el;
  return data;
}

napi_value make(napi_env env, double d) {
  napi_value v;
  napi_create_double(env, d, &v);
  return v;
}

/* The host address a device pointer stands for (the emulator's device memory is host memory). */
void *addressOf(napi_env env, napi_value v) {
  return reinterpret_cast<void *>(uintptr_t(num(env, v)));
}

template <size_t N>
size_t args(napi_env env, napi_callback_info info, napi_value (&a)[N]) {
  size_t argc = N;
  napi_get_cb_info(env, info, &argc, a, nullptr, nullptr);
  return argc;
}

/* alloc(bytes) → address; the memory is filled with NaN bytes (0xff) so that an element a
 * kernel forgets to write shows */
napi_value alloc(napi_env env, napi_callback_info info) {
  napi_value a[1];
  args(env, info, a);
  size_t bytes = size_t(num(env, a[0]));
  void *p = std::aligned_alloc(256, ((bytes + 255) / 256) * 256 + 256);
  std::memset(p, 0xff, bytes);
  return make(env, double(reinterpret_cast<uintptr_t>(p)));
}

napi_value release(napi_env env, napi_callback_info info) {
  napi_value a[1];
  args(env, info, a);
  std::free(addressOf(env, a[0]));
  return nullptr;
}

/* upload(address, typedArray) / download(address, typedArray): the array's bytes to (upload) or
 * from the address. */
napi_value copyBytes(napi_env env, napi_callback_info info, bool upload) {
  napi_value a[2];
  args(env, info, a);
  size_t n;
  void *bytes = bytesOf(env, a[1], &n);
  void *at = addressOf(env, a[0]);
  if (upload)
    std::memcpy(at, bytes, n);
  else
    std::memcpy(bytes, at, n);
  return nullptr;
}

napi_value upload(napi_env env, napi_callback_info info) { return copyBytes(env, info, true); }

napi_value download(napi_env env, napi_callback_info info) { return copyBytes(env, info, false); }

napi_value zero(napi_env env, napi_callback_info info) {
  napi_value a[2];
  args(env, info, a);
  std::memset(addressOf(env, a[0]), 0, size_t(num(env, a[1])));
  return nullptr;
}

napi_value copy(napi_env env, napi_callback_info info) {
  napi_value a[3];
  args(env, info, a);
  std::memmove(addressOf(env, a[0]), addressOf(env, a[1]), size_t(num(env, a[2])));
  return nullptr;
}

/* launch(name, gx, gy, gz, bx, by, bz, sharedBytes, params) */
napi_value launch(napi_env env, napi_callback_info info) {
  napi_value a[9];
  args(env, info, a);
  char name[128];
  size_t len;
  napi_get_value_string_utf8(env, a[0], name, sizeof name, &len);
  auto it = kernels.find(name);
  if (it == kernels.end()) {
    napi_throw_error(env, nullptr, (std::string("emulator: no kernel ") + name).c_str());
    return nullptr;
  }
  dim3 grid{unsigned(num(env, a[1])), unsigned(num(env, a[2])), unsigned(num(env, a[3]))};
  dim3 block{unsigned(num(env, a[4])), unsigned(num(env, a[5])), unsigned(num(env, a[6]))};
  size_t shared = size_t(num(env, a[7]));
  size_t n;
  const uint8_t *params = static_cast<const uint8_t *>(bytesOf(env, a[8], &n));
  std::vector<uint8_t> copyOfParams(params, params + n);
  if (block.y != 1 || block.z != 1) {
    napi_throw_error(env, nullptr, "emulator: only one-dimensional blocks");
    return nullptr;
  }
  unsigned threads = block.x;
  loop_emu::g_blockDim = block;
  loop_emu::g_gridDim = grid;
  Entry fn = it->second;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        loop_emu::Block b;
        b.block.expected = threads;
        for (unsigned w = 0; w < (threads + 31) / 32; w++)
          b.warps.push_back(loop_emu::Barrier{std::min(32u, threads - 32 * w), 0, 0});
        b.exchange.assign(((threads + 31) / 32) * 32, 0.f);
        b.dynamic.assign(shared / 8 + 1, 0.0);
        std::memset(b.dynamic.data(), 0xff, b.dynamic.size() * 8);
        loop_emu::g_block = &b;
        loop_emu::t_block = dim3{bx, by, bz};
        currentFn = fn;
        currentParams = copyOfParams.data();
        runBlock(threads);
        loop_emu::g_block = nullptr;
      }
  return nullptr;
}

#define FN(name) {#name, nullptr, name, nullptr, nullptr, nullptr, napi_default, nullptr}
napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {FN(alloc),    FN(release), FN(upload), FN(download),
                                      FN(zero),     FN(copy),    FN(launch)};
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
