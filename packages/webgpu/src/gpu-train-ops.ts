/*
 * `TrainOps` of the WebGPU backend: the optimiser's kernels (@loop/tensor's `AdamWCore` and
 * `clipGradients`, @loop/train's `deviceStepEngine`) on `GpuTensor`s of one context — the
 * gradient norm, the AdamW update, a step's report slots, the finite guard, the loss-scale
 * unscaling. Every op enqueues kernels and reads nothing back; `read` is the one round trip (a
 * step reads its losses and the gradient norm together). The gradients come from the backend's
 * autograd (gpu-autograd.ts: `gradOf` with any pending clipping applied, `takeGrad` with it
 * handed to the AdamW kernel). The AdamW element arithmetic is float32 (the CPU's is double).
 */
import type { TrainOps, TrainParameter } from "@loop/tensor";
import type { DeviceAutograd } from "@loop/tensor/kernel";
import type { GpuContext } from "./gpu-context.js";
import { emptyLike, GpuTensor, releaseTransients, uploadTensor } from "./gpu-tensor.js";
import { grid } from "./kernel-def.js";
import {
  adamwKernel,
  normFinishKernel,
  OPTIM_GROUP,
  SQ_BLOCK,
  sumSquaresKernel,
} from "./kernels/optim.js";
import { guardedAdamwKernel, guardFiniteKernel } from "./kernels/step-guard.js";
import { fillInPlace } from "./ops/elementwise-plain.js";
import { placeholder } from "./ops/optional-inputs.js";
import { scaleGradients } from "./ops/scale-grads.js";

/** A trainable GPU tensor with its name and whether weight decay applies. */
export type GpuNamedParameter = TrainParameter<GpuTensor>;

/**
 * sqrt(Σ_p Σ_i g²): one dispatch per gradient writes the Σ g² of each of its blocks into one
 * list, one more sums the list (fixed orders throughout, no float atomics: the same bits every
 * run).
 */
function normOf(ctx: GpuContext, grads: readonly GpuTensor[]): GpuTensor {
  const blocks = grads.map((g) => Math.ceil(g.size / SQ_BLOCK));
  const count = blocks.reduce((a, b) => a + b, 0);
  const parts = emptyLike(ctx, [Math.max(1, count)]);
  let off = 0;
  grads.forEach((g, k) => {
    const n = blocks[k]!;
    if (n > 0) ctx.run(sumSquaresKernel, { g, parts }, { n: g.size, blocks: n, off }, grid(n, 1));
    off += n;
  });
  const norm = emptyLike(ctx, [1]);
  ctx.run(normFinishKernel, { parts, norm }, { count }, [1]);
  return norm;
}

/** What the optimiser kernels read of the backend's autograd (gpu-autograd.ts). */
export type GpuGradients = Pick<DeviceAutograd<GpuTensor>, "gradOf" | "takeGrad" | "hasGrad">;

/**
 * The GPU's `TrainOps` on `ctx`: the gradient norm, the AdamW update and a step's slots on GPU
 * tensors, reading the gradients through `grads` (the backend's autograd).
 */
export function gpuTrainOps(ctx: GpuContext, grads: GpuGradients): TrainOps<GpuTensor> {
  return {
    name: `webgpu (${ctx.adapterName})`,
    upload: (data, shape, opts = {}) => uploadTensor(ctx, data, shape, opts),
    uploadInt: (data, shape) => uploadTensor(ctx, data, shape),
    read: (t) => t.read(),
    shapeOf: (t) => t.shape,
    releaseTransients: (keep) => releaseTransients(ctx, keep),
    gradNorm: (params) => normOf(ctx, params.map(grads.gradOf)),
    zeros: (shape) => {
      const t = new GpuTensor(ctx, shape, { persistent: true });
      fillInPlace(t, 0);
      return t;
    },
    adamw: (param, m, v, c, guard) => {
      const { grad: g, clip: clipped } = grads.takeGrad(param);
      ctx.run(
        guard ? guardedAdamwKernel : adamwKernel,
        {
          w: param,
          g: g.buffer,
          m,
          v,
          norm: clipped?.norm.buffer ?? placeholder(ctx),
          ...(guard ? { guard } : {}),
        },
        {
          n: param.size,
          decay: c.decay,
          stepSize: c.stepSize,
          b1: c.beta1,
          b2: c.beta2,
          eps: c.eps,
          sc2: c.sc2,
          clip: clipped ? 1 : 0,
          maxNorm: clipped?.maxNorm ?? 0,
        },
        grid(param.size, OPTIM_GROUP),
      );
    },
    guardFinite: (values, guard) =>
      ctx.run(guardFiniteKernel, { values, guard }, { n: values.size }, [1]),
    flush: () => ctx.flush(),
    // (a pending clipping is applied first: gradOf)
    scaleGrads: (params, factor) =>
      scaleGradients(params.filter(grads.hasGrad).map(grads.gradOf), factor),
    dispose: (t) => t.dispose(),
  };
}
