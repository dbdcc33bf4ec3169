/*
 * Differentiable elementwise ops on GPU tensors (`add`, `scale`); the unrecorded building blocks
 * of gradients and optimisers are elementwise-plain.ts (re-exported here).
 */

import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { EW_GROUP, scaleKernel } from "../kernels/elementwise.js";
import { recordGpu } from "../tape.js";
import { addTensors } from "./elementwise-plain.js";

/** a + b (same shape), differentiable. */
export function add(a: GpuTensor, b: GpuTensor): GpuTensor {
  const out = addTensors(a, b);
  recordGpu("add", [a, b], [out], ([g]) => [g!, g!]);
  return out;
}

/** alpha·a, differentiable. */
export function scale(a: GpuTensor, alpha: number): GpuTensor {
  const out = emptyLike(a.ctx, a.shape);
  a.ctx.run(scaleKernel, { a, out }, { n: a.size, alpha }, grid(a.size, EW_GROUP));
  recordGpu("scale", [a], [out], ([g]) => [scale(g!, alpha)]);
  return out;
}
