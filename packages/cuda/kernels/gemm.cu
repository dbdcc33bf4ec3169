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

#define BK16 32
/* bf16 operands (A, B as __nv_bfloat16), fp32 accumulation; 128 threads. */
KERNEL void __launch_bounds__(128) gemm_bf16(int transA, int transB, int M, int N, int K,
                                             float alpha, const __nv_bfloat16 *__restrict__ A,
                                             int lda, const __nv_bfloat16 *__restrict__ B, int ldb,
                                             float beta, float *__restrict__ C, int ldc) {
  __shared__ __align__(32) __nv_bfloat16 As[TILE][BK16 + 8];
  __shared__ __align__(32) __nv_bfloat16 Bs[BK16][TILE + 8];
  __shared__ __align__(32) float Cs[TILE][TILE + 4];
  int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  int warp = threadIdx.x / 32, wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
  const __nv_bfloat16 zero = __float2bfloat16(0.f);
  for (int k0 = 0; k0 < K; k0 += BK16) {
    for (int e = threadIdx.x; e < TILE * BK16; e += 128) {
      int i = e / BK16, k = e % BK16, m = m0 + i, kk = k0 + k;
      As[i][k] = (m < M && kk < K) ? (transA ? A[(long long)kk * lda + m] : A[(long long)m * lda + kk]) : zero;
      int j = e % TILE, k2 = e / TILE, n = n0 + j, kk2 = k0 + k2;
      Bs[k2][j] = (n < N && kk2 < K) ? (transB ? B[(long long)n * ldb + kk2] : B[(long long)kk2 * ldb + n]) : zero;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK16; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[2];
#pragma unroll
      for (int i = 0; i < 2; i++) wmma::load_matrix_sync(a[i], &As[wm + 16 * i][kk], BK16 + 8);
#pragma unroll
      for (int j = 0; j < 2; j++) wmma::load_matrix_sync(b[j], &Bs[kk][wn + 16 * j], TILE + 8);
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

#define BK32 32
/* fp32 operands rounded to tf32 on the tensor cores, fp32 accumulation; 128 threads. */
KERNEL void __launch_bounds__(128) gemm_tf32(int transA, int transB, int M, int N, int K,
                                             float alpha, const float *__restrict__ A, int lda,
                                             const float *__restrict__ B, int ldb, float beta,
                                             float *__restrict__ C, int ldc) {
  __shared__ __align__(32) float As[TILE][BK32 + 4];
  __shared__ __align__(32) float Bs[BK32][TILE + 4];
  __shared__ __align__(32) float Cs[TILE][TILE + 4];
  int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
  int warp = threadIdx.x / 32, wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
  for (int k0 = 0; k0 < K; k0 += BK32) {
    for (int e = threadIdx.x; e < TILE * BK32; e += 128) {
      int i = e / BK32, k = e % BK32, m = m0 + i, kk = k0 + k;
      As[i][k] = (m < M && kk < K) ? (transA ? A[(long long)kk * lda + m] : A[(long long)m * lda + kk]) : 0.f;
      int j = e % TILE, k2 = e / TILE, n = n0 + j, kk2 = k0 + k2;
      Bs[k2][j] = (n < N && kk2 < K) ? (transB ? B[(long long)n * ldb + kk2] : B[(long long)kk2 * ldb + n]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK32; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b[2];
#pragma unroll
      for (int i = 0; i < 2; i++) {
        wmma::load_matrix_sync(a[i], &As[wm + 16 * i][kk], BK32 + 4);
#pragma unroll
        for (int t = 0; t < a[i].num_elements; t++) a[i].x[t] = wmma::__float_to_tf32(a[i].x[t]);
      }
#pragma unroll
      for (int j = 0; j < 2; j++) {
        wmma::load_matrix_sync(b[j], &Bs[kk][wn + 16 * j], TILE + 4);
#pragma unroll
        for (int t = 0; t < b[j].num_elements; t++) b[j].x[t] = wmma::__float_to_tf32(b[j].x[t]);
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

/* y[i] = bf16(x[i]): the bf16 operand copies of the mixed-precision GEMMs. */
KERNEL void cast_bf16(long long n, const float *__restrict__ x, __nv_bfloat16 *__restrict__ y) {
  FOR_EACH(i, n) y[i] = __float2bfloat16(x[i]);
}
