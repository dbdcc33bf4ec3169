/*
 * A CPU emulation of the CUDA built-ins the backend's kernels use, so that the same kernel
 * source runs on the host (tests on machines without a GPU; docs/cuda.md "The emulator"). Each
 * block runs alone: __syncthreads is a barrier of the block, a warp shuffle an exchange through
 * memory between two barriers of the warp, `__shared__` variables
 * are static (one block at a time uses them). WMMA fragments hold their whole tile in every
 * thread (each lane computes the same product). Slow, and it proves nothing about the GPU's
 * memory model or speed: it checks the kernels' arithmetic, indexing, bounds and tile layouts.
 * The threads of a block are fibers on one OS thread (ucontext), switched at the barriers.
 */
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace loop_emu {
/* A barrier of a block or a warp: `expected` threads (fewer as threads finish) */
struct Barrier {
  unsigned expected = 0;
  unsigned count = 0;
  unsigned long generation = 0;
};
struct Block {
  Barrier block;
  std::vector<Barrier> warps;
  std::vector<float> exchange;
  std::vector<double> dynamic;
};
inline dim3 t_thread;
inline dim3 t_block;
inline dim3 g_blockDim;
inline dim3 g_gridDim;
inline Block *g_block = nullptr;
/* Switch to the next thread of the block (the emulator's scheduler). */
void yield();
inline void *dynamic_shared() { return g_block->dynamic.data(); }
inline void arrive(Barrier &b) {
  if (++b.count >= b.expected) {
    b.count = 0;
    b.generation++;
    return;
  }
  unsigned long g = b.generation;
  while (b.generation == g) yield();
}
/* A thread finished: the barriers it belongs to wait for one thread fewer. */
inline void drop(Barrier &b) {
  b.expected--;
  if (b.count > 0 && b.count >= b.expected) {
    b.count = 0;
    b.generation++;
  }
}
}  // namespace loop_emu

#define threadIdx (loop_emu::t_thread)
#define blockIdx (loop_emu::t_block)
#define blockDim (loop_emu::g_blockDim)
#define gridDim (loop_emu::g_gridDim)

inline void __syncthreads() { loop_emu::arrive(loop_emu::g_block->block); }

inline float __shfl_xor_sync(unsigned, float v, int o) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  loop_emu::Barrier &bar = loop_emu::g_block->warps[w];
  float *x = &loop_emu::g_block->exchange[w * 32];
  x[lane] = v;
  loop_emu::arrive(bar);
  float r = x[lane ^ o];
  loop_emu::arrive(bar);
  return r;
}

inline float __expf(float x) { return expf(x); }
inline float rsqrtf(float x) { return 1.f / sqrtf(x); }
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline int min(int a, int b) { return a < b ? a : b; }
using std::isfinite;
inline float atomicAdd(float *p, float v) {
  float old = *p;
  *p = old + v;
  return old;
}

/* bf16: the upper half of a float, rounded to nearest even */
struct __nv_bfloat16 {
  uint16_t bits;
  operator float() const {
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};
inline __nv_bfloat16 __float2bfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {uint16_t((u >> 16) | 0x40)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return {uint16_t(u >> 16)};
}

namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
enum layout_t { mem_row_major };
namespace precision {
struct tf32 {};
}  // namespace precision
template <class Use, int M, int N, int K, class T, class L = void>
struct fragment {
  static constexpr int rows = std::is_same_v<Use, matrix_b> ? K : M;
  static constexpr int cols = std::is_same_v<Use, matrix_a> ? K : N;
  static constexpr int num_elements = rows * cols;
  float x[rows * cols];
};
template <class F>
inline void fill_fragment(F &f, float v) {
  for (int i = 0; i < F::num_elements; i++) f.x[i] = v;
}
template <class F, class T>
inline void load_matrix_sync(F &f, const T *p, unsigned ldm) {
  for (int r = 0; r < F::rows; r++)
    for (int c = 0; c < F::cols; c++) f.x[r * F::cols + c] = float(p[r * ldm + c]);
}
template <class D, class A, class B, class C>
inline void mma_sync(D &d, const A &a, const B &b, const C &c) {
  float out[D::num_elements];
  for (int i = 0; i < D::rows; i++)
    for (int j = 0; j < D::cols; j++) {
      float s = c.x[i * C::cols + j];
      for (int k = 0; k < A::cols; k++) s += a.x[i * A::cols + k] * b.x[k * B::cols + j];
      out[i * D::cols + j] = s;
    }
  std::memcpy(d.x, out, sizeof out);
}
template <class F>
inline void store_matrix_sync(float *p, const F &f, unsigned ldm, layout_t) {
  for (int r = 0; r < F::rows; r++)
    for (int c = 0; c < F::cols; c++) p[r * ldm + c] = f.x[r * F::cols + c];
}
/* tf32: 10 mantissa bits, rounded to nearest */
inline float __float_to_tf32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace wmma
}  // namespace nvcuda
