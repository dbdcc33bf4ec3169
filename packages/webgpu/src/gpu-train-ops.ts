/*
 * `TrainOps` of the WebGPU backend: what @loop/tensor's `AdamWCore` and `clipGradients` and
 * @loop/train's `deviceStepEngine` need, on `GpuTensor`s of one context. Every op enqueues
 * kernels and reads nothing back; `read` is the one round trip (a step reads its losses and the
 * gradient norm together). Frozen parameters and parameters without a gradient are skipped by
 * the callers (`hasGrad`). The AdamW element arithmetic is float32 (the CPU's is double).
 */
import type { TrainOps, TrainParameter } from "@loop/tensor";
import { DeferredClip } from "@loop/tensor/kernel";
import { backwardGpu, zeroGpuGrads } from "./backward.js";
import { withCheckpointRelease } from "./checkpoint.js";
import type { GpuContext } from "./gpu-context.js";
import { emptyLike, GpuTensor, releaseTransients, uploadTensor } from "./gpu-tensor.js";
import { grid } from "./kernel-def.js";
import {
  adamwKernel,
  clipScaleKernel,
  normFinishKernel,
  OPTIM_GROUP,
  SQ_BLOCK,
  sumSquaresKernel,
} from "./kernels/optim.js";
import { guardedAdamwKernel, guardFiniteKernel } from "./kernels/step-guard.js";
import { fillInPlace, fillTensor } from "./ops/elementwise-plain.js";
import { placeholder } from "./ops/optional-inputs.js";
import { scaleGradients } from "./ops/scale-grads.js";
import { gpuNoGrad, gpuTape } from "./tape.js";

/** A trainable GPU tensor with its name and whether weight decay applies. */
export type GpuNamedParameter = TrainParameter<GpuTensor>;

function gradOf(t: GpuTensor): GpuTensor {
  if (!t.grad) throw new Error(`webgpu: parameter ${t.name ?? t.id} has no gradient`);
  return t.grad;
}

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

/** Clipping deferred to the update (@loop/tensor's `DeferredClip`) on the GPU. */
function deferredClip(ctx: GpuContext): DeferredClip<GpuTensor> {
  return new DeferredClip<GpuTensor>({
    keepNorm(norm, into) {
      const t = into ?? new GpuTensor(ctx, [1], { persistent: true });
      ctx.copy(norm.buffer, 0, t.buffer, 0, 4);
      return t;
    },
    scale: (g, norm, maxNorm) =>
      ctx.run(clipScaleKernel, { norm, g }, { n: g.size, maxNorm }, grid(g.size, OPTIM_GROUP)),
    released: (g) => g.released,
  });
}

/**
 * Options of the GPU's training ops: whether the backward frees activations as soon as they are
 * used.
 */
export interface GpuTrainOptions {
  /**
   * Free activations and intermediate gradients during the backward as soon as their last use
   * has been queued (default true; false keeps them to the end of the micro-batch, as a
   * reference for the memory saving).
   */
  releaseInBackward?: boolean;
}

/**
 * The GPU's `TrainOps` on `ctx`: tape backward, gradients, clipping and the AdamW update on GPU
 * tensors.
 */
export function gpuTrainOps(ctx: GpuContext, opts: GpuTrainOptions = {}): TrainOps<GpuTensor> {
  const release = opts.releaseInBackward ?? true;
  const clip = deferredClip(ctx);
  return {
    name: `webgpu (${ctx.adapterName})`,
    upload: (data, shape, opts = {}) => uploadTensor(ctx, data, shape, opts),
    uploadInt: (data, shape) => uploadTensor(ctx, data, shape),
    read: (t) => t.read(),
    shapeOf: (t) => t.shape,
    noGrad: gpuNoGrad,
    releaseTransients: (keep) => releaseTransients(ctx, keep),
    backward: (loss, weight) => {
      clip.settleAll(); // gradients added to after a clipping hold the clipped values
      const seed = fillTensor(ctx, [1], weight);
      withCheckpointRelease(release, () => backwardGpu(loss, seed, { release }));
    },
    setTrainable: (t, on) => {
      t.requiresGrad = on;
    },
    hasGrad: (t) => gpuTape.hasGrad(t),
    zeroGrads: (params) => {
      for (const p of params) clip.forget(p.grad);
      zeroGpuGrads(params);
    },
    readGrad: async (t) => {
      if (!t.grad) return null;
      clip.settle(t.grad);
      return t.grad.read();
    },
    gradNorm: (params) => {
      const grads = params.map(gradOf);
      for (const g of grads) clip.settle(g);
      return normOf(ctx, grads);
    },
    clipGrads: (params, norm, maxNorm) => {
      if (!(maxNorm > 0)) throw new Error(`webgpu clipGrads: maxNorm must be > 0, got ${maxNorm}`);
      clip.note(params.map(gradOf), norm, maxNorm);
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
    adamw: (param, m, v, c, guard) => {
      const g = gradOf(param);
      const clipped = clip.take(g);
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
    scaleGrads: scaleGradients,
    dispose: (t) => t.dispose(),
  };
}
