/*
 * Embedding: y[m, :] = w[ids[m], :] (ids [M], w [V,D], y [M,D]); an id outside [0, V) gives a
 * row of NaN (ids are not read back to be checked: the mistake shows instead of reading out of
 * bounds) and no gradient.
 * Backward: gw[ids[m], :] += g[m, :] — rows of one id from many positions add with atomics
 * (the one reduction of the backend whose order is not fixed; its rounding differs run to run
 * by an ulp, no loss or gate decision reads it directly).
 */
#include "common.cuh"

KERNEL void embedding_fwd(long long M, int D, int V, const int *ids, const float *w, float *y) {
  FOR_EACH(i, M * D) {
    int id = ids[i / D];
    y[i] = (id >= 0 && id < V) ? w[(long long)id * D + i % D] : LOOP_NAN;
  }
}
KERNEL void embedding_bwd(long long M, int D, int V, const int *ids, const float *g, float *gw) {
  FOR_EACH(i, M * D) {
    int id = ids[i / D];
    if (id >= 0 && id < V) atomicAdd(gw + (long long)id * D + i % D, g[i]);
  }
}
