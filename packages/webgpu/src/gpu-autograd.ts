/*
 * Autograd on the WebGPU backend: @loop/tensor's `deviceAutograd` (written once for every
 * device backend) over the GPU tape (tape.ts). This file only says what it reads of the GPU's
 * memory: a one-element seed, a read-back, the checkpoint's stand-in view, how a walk gives
 * memory back (`releaseInBackward`), the trainable flag, and the device half of deferred
 * clipping (a persistent copy of the norm, the scaling kernel).
 */
import { type ClipDevice, type DeviceAutograd, deviceAutograd } from "@loop/tensor/kernel";
import { checkpointStandIn, walkRelease } from "./checkpoint.js";
import type { GpuContext } from "./gpu-context.js";
import { GpuTensor } from "./gpu-tensor.js";
import { grid } from "./kernel-def.js";
import { clipScaleKernel, OPTIM_GROUP } from "./kernels/optim.js";
import { fillTensor } from "./ops/elementwise-plain.js";
import { gpuTape } from "./tape.js";

/** How the GPU's backward gives memory back. */
export interface GpuTrainOptions {
  /**
   * Free activations and intermediate gradients during the backward as soon as their last use
   * has been queued, in the outer walk and in every checkpoint's recomputation (default true;
   * false keeps them to the end of the micro-batch, as a reference for the memory saving).
   */
  releaseInBackward?: boolean;
}

/** Deferred clipping's device half (@loop/tensor's `DeferredClip`) on the GPU. */
function clipDevice(ctx: GpuContext): ClipDevice<GpuTensor> {
  return {
    keepNorm(norm, into) {
      // a copy of its own: releasing the step's transients must not take the norm
      const t = into ?? new GpuTensor(ctx, [1], { persistent: true });
      ctx.copy(norm.buffer, 0, t.buffer, 0, 4);
      return t;
    },
    scale: (g, norm, maxNorm) =>
      ctx.run(clipScaleKernel, { norm, g }, { n: g.size, maxNorm }, grid(g.size, OPTIM_GROUP)),
    released: (g) => g.released,
  };
}

/** `AutogradOps` on `ctx`'s tensors, with the gradients' access for the optimiser kernels. */
export function gpuAutograd(
  ctx: GpuContext,
  opts: GpuTrainOptions = {},
): DeviceAutograd<GpuTensor> {
  const release = opts.releaseInBackward ?? true;
  return deviceAutograd<GpuTensor>({
    name: "webgpu",
    tape: gpuTape,
    scalar: (value) => fillTensor(ctx, [1], value),
    read: (t) => t.read(),
    standIn: checkpointStandIn,
    walk: () => walkRelease(release),
    setTrainable: (t, on) => {
      t.requiresGrad = on;
    },
    // the gradients' blocks go back to the pool (the next step's first contribution allocates)
    freeGradsOnZero: true,
    clip: clipDevice(ctx),
  });
}
