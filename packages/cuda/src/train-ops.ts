/*
 * `TrainOps` (@loop/tensor) on a CUDA context: what `AdamWCore`, `clipGradients` and
 * @loop/train's `deviceStepEngine` need. Nothing reads back but `read`: the gradient norm is a
 * one-element device tensor (per-block sums of squares, then one block), clipping is noted and
 * applied by the AdamW kernel as it reads each gradient (no pass of its own), and the AdamW
 * update skips itself on the device when the step's guard says a loss or the norm is not finite
 * — so the engine queues the next step while this one runs (one step in flight).
 */
import type { TrainOps } from "@loop/tensor";
import { DeferredClip } from "@loop/tensor/kernel";
import type { CudaContext } from "./context.js";
import type { CudaTensor } from "./cuda-tensor.js";
import { SQ_BLOCK } from "./kernel-table.js";
import { readTensor } from "./model-ops.js";
import { backwardFrom } from "./tape.js";

function gradOf(t: CudaTensor): CudaTensor {
  if (!t.grad || !t.gradLive) throw new Error(`cuda: tensor ${t.id} [${t.shape}] has no gradient`);
  return t.grad;
}

/** Clipping noted per gradient, applied by AdamW or by whatever reads the gradient first. */
function deferredClip(ctx: CudaContext): DeferredClip<CudaTensor> {
  return new DeferredClip<CudaTensor>({
    keepNorm(norm, into) {
      const t = into ?? ctx.empty([1], "f32", true);
      ctx.copyInto(t, norm);
      return t;
    },
    scale: (g, norm, maxNorm) =>
      ctx.run("scale_clip", ctx.elems(g.size), [g.size, g, norm, maxNorm]),
    released: (g) => g.released,
  });
}

/** The training ops on `ctx`. */
export function cudaTrainOps(
  ctx: CudaContext,
): Omit<
  TrainOps<CudaTensor, CudaTensor>,
  "upload" | "uploadInt" | "read" | "shapeOf" | "noGrad" | "releaseTransients" | "dispose"
> {
  const clip = deferredClip(ctx);
  return {
    name: `cuda (${ctx.device.name}, ${ctx.precision})`,
    backward(loss, weight) {
      clip.settleAll();
      backwardFrom(ctx, loss, weight);
    },
    setTrainable(t, on) {
      t.requiresGrad = on;
      t.trainable = on;
    },
    hasGrad: (t) => ctx.tape.hasGrad(t),
    zeroGrads(params) {
      for (const p of params) clip.forget(p.grad);
      // the blocks stay for the next backward, which overwrites them first
      ctx.tape.zeroGrads(params);
    },
    async readGrad(t) {
      if (!ctx.tape.hasGrad(t)) return null;
      clip.settle(t.grad!);
      return readTensor(t.grad!);
    },
    gradNorm(params) {
      const grads = params.map(gradOf);
      for (const g of grads) clip.settle(g);
      const blocks = grads.map((g) => Math.ceil(g.size / SQ_BLOCK));
      const count = Math.max(
        1,
        blocks.reduce((a, b) => a + b, 0),
      );
      const parts = ctx.zeros([count]);
      let off = 0;
      grads.forEach((g, i) => {
        const n = blocks[i]!;
        if (n > 0)
          ctx.run("sum_squares", { grid: [n, 1, 1], block: [256, 1, 1], shared: 0 }, [
            g.size,
            g,
            parts,
            off,
          ]);
        off += n;
      });
      const norm = ctx.empty([1]);
      ctx.run("norm_finish", ctx.rows(1), [count, parts, norm]);
      return norm;
    },
    clipGrads(params, norm, maxNorm) {
      if (!(maxNorm > 0)) throw new Error(`cuda clipGrads: maxNorm must be > 0, got ${maxNorm}`);
      clip.note(params.map(gradOf), norm, maxNorm);
    },
    zeros: (shape) => ctx.zeros(shape, true),
    scalars: (n) => ctx.zeros([n]),
    copyScalar(src, dst, index) {
      if (index < 0 || index >= dst.size)
        throw new Error(`cuda copyScalar: slot ${index} outside [0, ${dst.size})`);
      ctx.device.copy(dst.ptr + index * 4, src.ptr, 4);
    },
    adamw(param, m, v, c, guard) {
      const g = gradOf(param);
      const clipped = clip.take(g);
      ctx.run("adamw", ctx.elems(param.size), [
        param.size,
        param,
        g,
        m,
        v,
        c.decay,
        c.stepSize,
        c.beta1,
        c.beta2,
        c.eps,
        c.sc2,
        guard ?? null,
        clipped?.norm ?? null,
        clipped?.maxNorm ?? 0,
      ]);
      param.version++;
    },
    guardFinite: (values, guard) =>
      ctx.run("guard_finite", ctx.elems(values.size), [values.size, values, guard]),
    scaleGrads(params, factor) {
      for (const p of params) {
        const g = gradOf(p);
        clip.settle(g);
        ctx.axpy(0, g, factor, g);
      }
    },
  };
}
