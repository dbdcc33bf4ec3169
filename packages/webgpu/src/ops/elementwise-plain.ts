/*
 * Elementwise building blocks of gradients and optimisers on GPU tensors: fill, copy, sums
 * (not recorded: the tape's backward walk sums gradients with them, so this file does not
 * import the tape; the differentiable `add` and `scale` are elementwise.ts).
 */

import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor, type Shape } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  addIntoKernel,
  addKernel,
  axpbyKernel,
  copyKernel,
  EW_GROUP,
  fillKernel,
} from "../kernels/elementwise.js";
import { partialSumInput } from "./partial-sums.js";

function sameSize(op: string, a: GpuTensor, b: GpuTensor): void {
  if (a.size !== b.size || a.shape.join(",") !== b.shape.join(","))
    throw new Error(
      `webgpu ${op}: shapes [${a.shape.join(",")}] and [${b.shape.join(",")}] differ`,
    );
}

/** A transient tensor of `shape` filled with `value`. */
export function fillTensor(ctx: GpuContext, shape: Shape, value: number): GpuTensor {
  const out = emptyLike(ctx, shape);
  fillInPlace(out, value);
  return out;
}

/** Set every entry of `t` to `value`, on the GPU. */
export function fillInPlace(t: GpuTensor, value: number): void {
  t.ctx.run(fillKernel, { out: t }, { n: t.size, value }, grid(t.size, EW_GROUP));
}

/** dst ← src (same size). */
export function copyTensor(src: GpuTensor, dst: GpuTensor): void {
  if (src.size !== dst.size) throw new Error(`webgpu copy: ${src.size} into ${dst.size} elements`);
  src.ctx.run(copyKernel, { a: src, out: dst }, { n: src.size }, grid(src.size, EW_GROUP));
}

/** acc ← acc + a (in place, not recorded). */
export function addInto(acc: GpuTensor, a: GpuTensor): void {
  sameSize("addInto", acc, a);
  a.ctx.run(addIntoKernel, { a, acc }, { n: a.size }, grid(a.size, EW_GROUP));
}

/** a + b as a new tensor, not recorded. */
export function addTensors(a: GpuTensor, b: GpuTensor): GpuTensor {
  sameSize("add", a, b);
  const out = emptyLike(a.ctx, a.shape);
  // either may still be a GEMM's split-K partials (the residual add after an output projection)
  const ai = partialSumInput(a, "a");
  const bi = partialSumInput(b, "b");
  a.ctx.run(
    addKernel,
    { a: ai.buffer, b: bi.buffer, out },
    { n: a.size, ...ai.params, ...bi.params },
    grid(a.size, EW_GROUP),
  );
  return out;
}

/** alpha·a + beta·b as a new tensor, not recorded. */
export function axpby(alpha: number, a: GpuTensor, beta: number, b: GpuTensor): GpuTensor {
  sameSize("axpby", a, b);
  const out = emptyLike(a.ctx, a.shape);
  a.ctx.run(axpbyKernel, { a, b, out }, { n: a.size, alpha, beta }, grid(a.size, EW_GROUP));
  return out;
}
