/*
 * GEMM: C[M,N] = alpha·op(A)·op(B) + beta·C, row-major, fp32 accumulation.
 *   op(A) [M,K]: A stored [M,K] (transA 0, row stride lda) or [K,M] (transA 1);
 *   op(B) [K,N]: B stored [K,N] (transB 0) or [N,K] (transB 1, a weight [N,K] of linear).
 * Three paths, chosen by the host from the precision (the backend's own GEMM where cuBLASLt is
 * not found): gemm_f32 (SIMT, exact fp32), gemm_tf32 (tensor cores, tf32 operands) and
 * gemm_bf16 (tensor cores, bf16 operands). 64×64 output tiles; the tensor-core kernels run four
 * warps of 32×32 (2×2 WMMA fragments) over K tiles staged through shared memory with zero
 * padding, so any M, N, K works (no alignment asked of the caller). Grid: (⌈N/64⌉, ⌈M/64⌉).
 */
#include "common.cuh"
#include <mma.h>
using namespace nvcuda;

#define TILE 64

/* 256 threads, 4×4 outputs each, K tiles of 16. */
KERNEL void __launch_bounds__(256) gemm_f32(int transA, int transB, int M, int N, int K,
                                            float alpha, const float *__restrict__ A, int lda,
                                            const float *__restrict__ B, int ldb, float beta,
                                            float *__restrict__ C, int ldc) {
  __shared__ float As[16][TILE + 1];
  __shared__ float Bs[16][TILE + 1];
  int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = threadIdx.x; e < 16 * TILE; e += 256) {
      int k = e / TILE, i = e % TILE;
      int m = m0 + i, n = n0 + i, kk = k0 + k;
      As[k][i] = (m < M && kk < K) ? (transA ? A[(long long)kk * lda + m] : A[(long long)m * lda + kk]) : 0.f;
      Bs[k][i] = (n < N && kk < K) ? (transB ? B[(long long)n * ldb + kk] : B[(long long)kk * ldb + n]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; k++) {
      float a[4], b[4];
#pragma unroll
      for (int r = 0; r < 4; r++) a[r] = As[k][ty + 16 * r];
#pragma unroll
      for (int c = 0; c < 4; c++) b[c] = Bs[k][tx + 16 * c];
#pragma unroll
      for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < 4; r++)
#pragma unroll
    for (int c = 0; c < 4; c++) {
      int m = m0 + ty + 16 * r, n = n0 + tx + 16 * c;
      if (m < M && n < N) {
        float *p = C + (long long)m * ldc + n;
        *p = alpha * acc[r][c] + (beta == 0.f ? 0.f : beta * *p);
      }
    }
}

/* Write the 64×64 fp32 tile Cs into C with alpha, beta and the bounds. */
__device__ __forceinline__ void storeTile(const float *Cs, int ldcs, int m0, int n0, int M, int N,
                                          float alpha, float beta, float *C, int ldc) {
  for (int e = threadIdx.x; e < TILE * TILE; e += blockDim.x) {
    int i = e / TILE, j = e % TILE, m = m0 + i, n = n0 + j;
    if (m < M && n < N) {
      float *p = C + (long long)m * ldc + n;
      *p = alpha * Cs[i * ldcs + j] + (beta == 0.f ? 0.f : beta * *p);
    }
  }
}

/*
 * The tensor-core operands: the type A and B are stored in, the WMMA fragments' element type
 * and K (tf32 fragments are 16×16×8, bf16 ones 16×16×16), the row padding of the staged tiles
 * (16 bytes, off the shared-memory banks' stride) and what a loaded fragment needs before the
 * product (fp32 values rounded to tf32; bf16 ones are already the operands).
 */
template <class T>
struct TensorCoreOperand;
template <>
struct TensorCoreOperand<float> {
  using Fragment = wmma::precision::tf32;
  static constexpr int FK = 8;
  static constexpr int PAD = 4;
  static __device__ __forceinline__ float zero() { return 0.f; }
  template <class F>
  static __device__ __forceinline__ void prepare(F &f) {
#pragma unroll
    for (int t = 0; t < f.num_elements; t++) f.x[t] = wmma::__float_to_tf32(f.x[t]);
  }
};
template <>
struct TensorCoreOperand<__nv_bfloat16> {
  using Fragment = __nv_bfloat16;
  static constexpr int FK = 16;
  static constexpr int PAD = 8;
  static __device__ __forceinline__ __nv_bfloat16 zero() { return __float2bfloat16(0.f); }
  template <class F>
  static __device__ __forceinline__ void prepare(F &) {}
};

#define BK 32
/*
 * One 64×64 output tile on the tensor cores (128 threads, four warps of 32×32): K tiles of BK
 * staged through shared memory with zeros past the edges, 2×2 fragments per warp, fp32
 * accumulation, the tile written through Cs with alpha, beta and the bounds.
 */
template <class T>
__device__ __forceinline__ void tensorCoreTile(int transA, int transB, int M, int N, int K,
                                               float alpha, const T *__restrict__ A, int lda,
                                               const T *__restrict__ B, int ldb, float beta,
                                               float *__restrict__ C, int ldc) {
  using Op = TensorCoreOperand<T>;
  constexpr int FK = Op::FK, PAD = Op::PAD;
  __shared__ __align__(32) T As[TILE][BK + PAD];
  __shared__ __align__(32) T Bs[BK][TILE + PAD];
  __shared__ __align__(32) float Cs[TILE][TILE + 4];
  int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  int warp = threadIdx.x / 32, wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, FK, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
  const T zero = Op::zero();
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = threadIdx.x; e < TILE * BK; e += 128) {
      int i = e / BK, k = e % BK, m = m0 + i, kk = k0 + k;
      As[i][k] = (m < M && kk < K) ? (transA ? A[(long long)kk * lda + m] : A[(long long)m * lda + kk]) : zero;
      int j = e % TILE, k2 = e / TILE, n = n0 + j, kk2 = k0 + k2;
      Bs[k2][j] = (n < N && kk2 < K) ? (transB ? B[(long long)n * ldb + kk2] : B[(long long)kk2 * ldb + n]) : zero;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += FK) {
      wmma::fragment<wmma::matrix_a, 16, 16, FK, typename Op::Fragment, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, FK, typename Op::Fragment, wmma::row_major> b[2];
#pragma unroll
      for (int i = 0; i < 2; i++) {
        wmma::load_matrix_sync(a[i], &As[wm + 16 * i][kk], BK + PAD);
        Op::prepare(a[i]);
      }
#pragma unroll
      for (int j = 0; j < 2; j++) {
        wmma::load_matrix_sync(b[j], &Bs[kk][wn + 16 * j], TILE + PAD);
        Op::prepare(b[j]);
      }
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++)
      wmma::store_matrix_sync(&Cs[wm + 16 * i][wn + 16 * j], acc[i][j], TILE + 4,
                              wmma::mem_row_major);
  __syncthreads();
  storeTile(&Cs[0][0], TILE + 4, m0, n0, M, N, alpha, beta, C, ldc);
}

/* bf16 operands (A, B as __nv_bfloat16), fp32 accumulation; 128 threads. */
KERNEL void __launch_bounds__(128) gemm_bf16(int transA, int transB, int M, int N, int K,
                                             float alpha, const __nv_bfloat16 *__restrict__ A,
                                             int lda, const __nv_bfloat16 *__restrict__ B, int ldb,
                                             float beta, float *__restrict__ C, int ldc) {
  tensorCoreTile(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* fp32 operands rounded to tf32 on the tensor cores, fp32 accumulation; 128 threads. */
KERNEL void __launch_bounds__(128) gemm_tf32(int transA, int transB, int M, int N, int K,
                                             float alpha, const float *__restrict__ A, int lda,
                                             const float *__restrict__ B, int ldb, float beta,
                                             float *__restrict__ C, int ldc) {
  tensorCoreTile(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* y[i] = bf16(x[i]): the bf16 operand copies of the mixed-precision GEMMs. */
KERNEL void cast_bf16(long long n, const float *__restrict__ x, __nv_bfloat16 *__restrict__ y) {
  FOR_EACH(i, n) y[i] = __float2bfloat16(x[i]);
}
