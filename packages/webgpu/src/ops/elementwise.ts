/*
 * Differentiable elementwise ops on GPU tensors (`add`, `affine`, `scale`); the unrecorded building blocks
 * of gradients and optimisers are elementwise-plain.ts (re-exported here).
 */

import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { affineKernel, EW_GROUP } from "../kernels/elementwise.js";
import { recordGpu } from "../tape.js";
import { addTensors } from "./elementwise-plain.js";

/** a + b (same shape), differentiable. */
export function add(a: GpuTensor, b: GpuTensor): GpuTensor {
  const out = addTensors(a, b);
  recordGpu("add", [a, b], [out], ([g]) => [g!, g!]);
  return out;
}

/** alpha·a + shift, elementwise (`TensorOps.affine`); ∂a = alpha·g; differentiable. */
export function affine(a: GpuTensor, alpha: number, shift: number): GpuTensor {
  const out = emptyLike(a.ctx, a.shape);
  a.ctx.run(affineKernel, { a, out }, { n: a.size, alpha, shift }, grid(a.size, EW_GROUP));
  recordGpu("affine", [a], [out], ([g]) => [affine(g!, alpha, 0)]);
  return out;
}

/** alpha·a, differentiable. */
export const scale = (a: GpuTensor, alpha: number): GpuTensor => affine(a, alpha, 0);
