/*
 * Shared device helpers of the CUDA backend's kernels: block and warp sums in a fixed order
 * (the same bits on every run: no float atomics in a reduction that decides a loss), and the
 * scalar functions the model uses (silu, softplus, sigmoid), written to be exact at large |x|.
 * Every kernel is extern "C" so the host finds it by its plain name.
 */
#pragma once
#include <cuda_bf16.h>

#define KERNEL extern "C" __global__
/* ±∞ and NaN without math.h (NVRTC compiles without the host headers) */
#define LOOP_INF __int_as_float(0x7f800000)
#define LOOP_NAN __int_as_float(0x7fffffff)

__device__ __forceinline__ float sigmoidf_(float x) { return 1.f / (1.f + __expf(-x)); }
__device__ __forceinline__ float siluf_(float x) { return x * sigmoidf_(x); }
/* d silu / dx = σ(x)·(1 + x·(1 − σ(x))) */
__device__ __forceinline__ float dsiluf_(float x) {
  float s = sigmoidf_(x);
  return s * (1.f + x * (1.f - s));
}
/* softplus(x) = log(1 + e^x), exact for large |x| */
__device__ __forceinline__ float softplusf_(float x) {
  return x > 20.f ? x : (x < -20.f ? __expf(x) : log1pf(__expf(x)));
}

/* The two reductions of the kernels, as functors so that one warp and one block loop serve both
 * (inlined: the same instructions as a loop written out per operation). */
struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class Op>
__device__ __forceinline__ float warpReduce(float v, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/* op of v over the block, warps in order from `init` (blockDim.x a multiple of 32, at most 1024);
 * every thread gets it. */
template <class Op>
__device__ __forceinline__ float blockReduce(float v, float *scratch /* [32] */, float init,
                                             Op op) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warpReduce(v, op);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float s = init;
  for (int i = 0; i < nw; i++) s = op(s, scratch[i]);
  return s;
}

__device__ __forceinline__ float warpSum(float v) { return warpReduce(v, SumOp()); }
__device__ __forceinline__ float warpMax(float v) { return warpReduce(v, MaxOp()); }
/* Sum of v over the block; every thread gets it. */
__device__ __forceinline__ float blockSum(float v, float *scratch /* [32] */) {
  return blockReduce(v, scratch, 0.f, SumOp());
}
__device__ __forceinline__ float blockMax(float v, float *scratch /* [32] */) {
  return blockReduce(v, scratch, -LOOP_INF, MaxOp());
}

/* Grid-stride loop over n elements. */
#define FOR_EACH(i, n) \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
       i += (long long)gridDim.x * blockDim.x)
