/**
 * Embedding gather: y[i, :] = W[ids[i], :], ids any shape → y [...ids.shape, D].
 * Backward scatter-adds rows of g into ∂W (repeated ids accumulate).
 */
import { record1 } from "../autograd/node.js";
import { allocF32, type IntTensor, shapeStr, type Tensor } from "../tensor.js";

export function embedding(ids: IntTensor, w: Tensor): Tensor {
  if (w.rank !== 2) throw new Error(`embedding: weight must be [V, D], got ${shapeStr(w.shape)}`);
  const [V, D] = w.shape as [number, number];
  const n = ids.size;
  const y = allocF32(n * D);
  for (let i = 0; i < n; i++) {
    const id = ids.data[i]!;
    if (id < 0 || id >= V)
      throw new Error(`embedding: token id ${id} at position ${i} is outside [0, ${V})`);
    const o = id * D;
    for (let j = 0; j < D; j++) y[i * D + j] = w.data[o + j]!;
  }
  return record1("embedding", [w], y, [...ids.shape, D], ([g]) => {
    const gw = allocF32(w.size);
    for (let i = 0; i < n; i++) {
      const o = ids.data[i]! * D;
      for (let j = 0; j < D; j++) gw[o + j]! += g![i * D + j]!;
    }
    return [gw];
  });
}
