/*
 * Embedding: y[m, :] = w[ids[m], :] (ids [M], w [V,D], y [M,D]).
 * Backward: gw[ids[m], :] += g[m, :] — rows of one id from many positions add with atomics
 * (the one reduction of the backend whose order is not fixed; its rounding differs run to run
 * by an ulp, no loss or gate decision reads it directly).
 */
#include "common.cuh"

KERNEL void embedding_fwd(long long M, int D, const int *ids, const float *w, float *y) {
  FOR_EACH(i, M * D) {
    long long m = i / D;
    y[i] = w[(long long)ids[m] * D + i % D];
  }
}
KERNEL void embedding_bwd(long long M, int D, const int *ids, const float *g, float *gw) {
  FOR_EACH(i, M * D) {
    long long m = i / D;
    atomicAdd(gw + (long long)ids[m] * D + i % D, g[i]);
  }
}
