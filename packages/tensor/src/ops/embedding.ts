/*
 * Embedding gather: y[i, :] = W[ids[i], :], ids any shape → y [...ids.shape, D].
 * Backward scatter-adds rows of g into ∂W in row order (repeated ids accumulate); the native
 * twin (native/tensor.c `embeddingBwd`) adds in the same order and gives the same bits.
 */
import { record1 } from "../autograd/node.js";
import { kernelSet } from "../native-registry.js";
import { allocF32, allocF32Uninit, type IntTensor, shapeStr, type Tensor } from "../tensor.js";

/** native/tensor.c embeddingBwd(ids, g, gw, n, D): gw[ids[i], :] += g[i, :], i = 0..n−1. */
export type EmbeddingBwd = (
  ids: Int32Array,
  g: Float32Array,
  gw: Float32Array,
  n: number,
  D: number,
) => void;

/** Portable backward (the reference for the native twin). */
export const embeddingBwd: EmbeddingBwd = (ids, g, gw, n, D) => {
  for (let i = 0; i < n; i++) {
    const o = ids[i]! * D;
    const go = i * D;
    for (let j = 0; j < D; j++) gw[o + j]! += g[go + j]!;
  }
};

/**
 * Rows of the table w [V, D] for token ids [...]: [..., D]; differentiable in w; an id outside [0,
 * V) is an error.
 */
export function embedding(ids: IntTensor, w: Tensor): Tensor {
  if (w.rank !== 2) throw new Error(`embedding: weight must be [V, D], got ${shapeStr(w.shape)}`);
  const [V, D] = w.shape as [number, number];
  const n = ids.size;
  for (let i = 0; i < n; i++) {
    const id = ids.data[i]!;
    if (!(id >= 0 && id < V))
      throw new Error(`embedding: token id ${id} at position ${i} is outside [0, ${V})`);
  }
  const y = allocF32Uninit(n * D); // (every row is copied)
  for (let i = 0; i < n; i++) {
    const o = ids.data[i]! * D;
    y.set(w.data.subarray(o, o + D), i * D);
  }
  return record1("embedding", [w], y, [...ids.shape, D], ([g]) => {
    const gw = allocF32(w.size);
    (kernelSet("tensor")?.embeddingBwd ?? embeddingBwd)(ids.data, g!, gw, n, D);
    return [gw];
  });
}
