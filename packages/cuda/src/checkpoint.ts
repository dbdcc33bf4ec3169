/*
 * Activation checkpointing on the CUDA backend (`ModelOps.checkpoint`): the device tape's
 * `checkpoint` (@loop/tensor/kernel), its recompute ending at a view of x's block, the walk
 * through it giving each node's scratch back as an unwrapped walk does.
 */
import type { CudaContext } from "./context.js";
import { CudaTensor } from "./cuda-tensor.js";

/** `fn(x)` checkpointed; `params` the trainable tensors `fn` reads. */
export function checkpoint(
  ctx: CudaContext,
  fn: (x: CudaTensor) => CudaTensor,
  x: CudaTensor,
  params: readonly CudaTensor[],
): CudaTensor {
  const standIn = (x: CudaTensor) =>
    new CudaTensor(ctx, x.shape, x.dtype, x.persistent, x.owner, x.base ? x.byteOffset : 0);
  return ctx.tape.checkpoint(fn, x, params, standIn, { releaseScratch: true });
}
