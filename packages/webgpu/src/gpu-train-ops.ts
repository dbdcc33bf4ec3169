/**
 * `TrainOps` of the WebGPU backend: what @loop/tensor's `AdamWCore` and `clipGradients` and
 * @loop/train's `deviceStepEngine` need, on `GpuTensor`s of one context. Every op enqueues
 * kernels and reads nothing back; `read` is the one round trip (a step reads its losses and the
 * gradient norm together). Frozen parameters and parameters without a gradient are skipped by
 * the callers (`hasGrad`). The AdamW element arithmetic is float32 (the CPU's is double).
 */
import type { TrainOps, TrainParameter } from "@loop/tensor";
import { backwardGpu, zeroGpuGrads } from "./backward.js";
import { withCheckpointRelease } from "./checkpoint.js";
import type { GpuContext } from "./gpu-context.js";
import { emptyLike, GpuTensor, releaseTransients, uploadTensor } from "./gpu-tensor.js";
import { grid } from "./kernel-def.js";
import { adamwKernel, clipScaleKernel, normFinishKernel, OPTIM_GROUP } from "./kernels/optim.js";
import { guardedAdamwKernel, guardFiniteKernel } from "./kernels/step-guard.js";
import { reduceToShape } from "./ops/broadcast.js";
import { fillInPlace, fillTensor } from "./ops/elementwise.js";
import { copyBlock } from "./ops/shape.js";
import { gpuNoGrad } from "./tape.js";

/** A trainable GPU tensor with its name and whether weight decay applies. */
export type GpuNamedParameter = TrainParameter<GpuTensor>;

function gradOf(t: GpuTensor): GpuTensor {
  if (!t.grad) throw new Error(`webgpu: parameter ${t.name ?? t.id} has no gradient`);
  return t.grad;
}

/**
 * sqrt(Σ_p Σ_i g²): each gradient's Σ g² by the fixed-order chunked reduction, the parts added
 * in parameter order by one thread (no float atomics: the same bits every run).
 */
function normOf(ctx: GpuContext, grads: readonly GpuTensor[]): GpuTensor {
  const parts = emptyLike(ctx, [Math.max(1, grads.length)]);
  grads.forEach((g, k) => {
    const sq = reduceToShape(g, [1], { square: true, fresh: true });
    copyBlock({ t: sq, ld: 1 }, { t: parts, ld: 1, off: k }, 1, 1);
  });
  const norm = emptyLike(ctx, [1]);
  ctx.run(
    normFinishKernel,
    { parts: parts.buffer, norm: norm.buffer },
    { count: grads.length },
    [1],
  );
  return norm;
}

export interface GpuTrainOptions {
  /**
   * Free activations and intermediate gradients during the backward as soon as their last use
   * has been queued (default true; false keeps them to the end of the micro-batch, as a
   * reference for the memory saving).
   */
  releaseInBackward?: boolean;
}

export function gpuTrainOps(ctx: GpuContext, opts: GpuTrainOptions = {}): TrainOps<GpuTensor> {
  const release = opts.releaseInBackward ?? true;
  return {
    name: `webgpu (${ctx.adapterName})`,
    upload: (data, shape, opts = {}) => uploadTensor(ctx, data, shape, opts),
    uploadInt: (data, shape) => uploadTensor(ctx, data, shape),
    read: (t) => t.read(),
    shapeOf: (t) => t.shape,
    noGrad: gpuNoGrad,
    releaseTransients: (keep) => releaseTransients(ctx, keep),
    backward: (loss, weight) => {
      const seed = fillTensor(ctx, [1], weight);
      withCheckpointRelease(release, () => backwardGpu(loss, seed, { release }));
    },
    setTrainable: (t, on) => {
      t.requiresGrad = on;
    },
    hasGrad: (t) => t.requiresGrad && t.grad !== null,
    zeroGrads: zeroGpuGrads,
    readGrad: async (t) => (t.grad ? t.grad.read() : null),
    gradNorm: (params) => normOf(ctx, params.map(gradOf)),
    clipGrads: (params, norm, maxNorm) => {
      if (!(maxNorm > 0)) throw new Error(`webgpu clipGrads: maxNorm must be > 0, got ${maxNorm}`);
      for (const g of params.map(gradOf))
        ctx.run(
          clipScaleKernel,
          { norm: norm.buffer, g: g.buffer },
          { n: g.size, maxNorm },
          grid(g.size, OPTIM_GROUP),
        );
    },
    zeros: (shape) => {
      const t = new GpuTensor(ctx, shape, { persistent: true });
      fillInPlace(t, 0);
      return t;
    },
    scalars: (n) => fillTensor(ctx, [n], 0),
    copyScalar: (src, dst, index) => {
      if (index < 0 || index >= dst.size)
        throw new Error(`webgpu copyScalar: slot ${index} outside [0, ${dst.size})`);
      ctx.copy(src.buffer, 0, dst.buffer, index * 4, 4);
    },
    adamw: (param, m, v, c, guard) =>
      ctx.run(
        guard ? guardedAdamwKernel : adamwKernel,
        {
          w: param.buffer,
          g: gradOf(param).buffer,
          m: m.buffer,
          v: v.buffer,
          ...(guard ? { guard: guard.buffer } : {}),
        },
        {
          n: param.size,
          decay: c.decay,
          stepSize: c.stepSize,
          b1: c.beta1,
          b2: c.beta2,
          eps: c.eps,
          sc2: c.sc2,
        },
        grid(param.size, OPTIM_GROUP),
      ),
    guardFinite: (values, guard) =>
      ctx.run(
        guardFiniteKernel,
        { values: values.buffer, guard: guard.buffer },
        { n: values.size },
        [1],
      ),
    flush: () => ctx.flush(),
    dispose: (t) => t.dispose(),
  };
}
