/*
 * The CUDA backend's autograd: @loop/tensor's `deviceAutograd` over the context's tape, with what
 * it reads of the device — the loss seed (a [1] tensor), host reads, the view that stands in for a
 * checkpointed call's input, a walk that gives each node's scratch back after its backward (every
 * layer's backward reuses the same blocks), gradient blocks kept across zeroing (the next backward
 * overwrites them first), and the device's part of deferred clipping (a copy of the norm, the
 * `scale_clip` kernel). None of it is the backend's own logic.
 */
import { type ClipDevice, type DeviceAutograd, deviceAutograd } from "@loop/tensor/kernel";
import type { CudaContext } from "./context.js";
import { CudaTensor } from "./cuda-tensor.js";
import { readTensor } from "./model-ops.js";

/** Clipping's device part: keep a norm, scale a gradient by maxNorm/(norm + 1e-6) in place. */
function clipDevice(ctx: CudaContext): ClipDevice<CudaTensor> {
  return {
    keepNorm(norm, into) {
      const t = into ?? ctx.empty([1], "f32", true);
      ctx.copyInto(t, norm);
      return t;
    },
    scale: (g, norm, maxNorm) =>
      ctx.run("scale_clip", ctx.elems(g.size), [g.size, g, norm, maxNorm]),
    released: (g) => g.released,
  };
}

/** `AutogradOps` (and the optimiser's gradient access) on `ctx`'s tape. */
export function cudaAutograd(ctx: CudaContext): DeviceAutograd<CudaTensor> {
  return deviceAutograd<CudaTensor>({
    name: "cuda",
    tape: ctx.tape,
    scalar: (value) => ctx.full([1], value),
    read: readTensor,
    // a view of x's block with no node: the recomputation ends there
    standIn: (x) =>
      new CudaTensor(ctx, x.shape, x.dtype, x.persistent, x.owner, x.base ? x.byteOffset : 0),
    walk: () => ({ releaseScratch: true }),
    setTrainable(t, on) {
      t.requiresGrad = on;
      t.trainable = on;
    },
    freeGradsOnZero: false,
    clip: clipDevice(ctx),
  });
}
