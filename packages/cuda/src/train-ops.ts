/*
 * `TrainOps` (@loop/tensor) on a CUDA context: what `AdamWCore`, `clipGradients` and
 * @loop/train's `deviceStepEngine` need beyond autograd (which is `deviceAutograd`, autograd.ts:
 * these kernels ask it for each gradient). Nothing reads back but `read`: the gradient norm is a
 * one-element device tensor (per-block sums of squares, then one block), clipping is noted by
 * autograd and applied by the AdamW kernel as it reads each gradient (no pass of its own), and the AdamW
 * update skips itself on the device when the step's guard says a loss or the norm is not finite
 * — so the engine queues the next step while this one runs (one step in flight).
 */
import type { TrainOps } from "@loop/tensor";
import type { DeviceAutograd } from "@loop/tensor/kernel";
import type { CudaContext } from "./context.js";
import type { CudaTensor } from "./cuda-tensor.js";
import { SQ_BLOCK } from "./kernel-table.js";

/** What the optimiser's kernels ask of autograd: a gradient, its clipping applied or handed over. */
export type GradAccess = Pick<DeviceAutograd<CudaTensor>, "gradOf" | "takeGrad">;

/** The training ops on `ctx`. */
export function cudaTrainOps(
  ctx: CudaContext,
  grads: GradAccess,
): Omit<
  TrainOps<CudaTensor, CudaTensor>,
  "upload" | "uploadInt" | "read" | "shapeOf" | "releaseTransients" | "dispose"
> {
  return {
    name: `cuda (${ctx.device.name}, ${ctx.precision})`,
    gradNorm(params) {
      const gs = params.map((p) => grads.gradOf(p));
      const blocks = gs.map((g) => Math.ceil(g.size / SQ_BLOCK));
      const count = Math.max(
        1,
        blocks.reduce((a, b) => a + b, 0),
      );
      const parts = ctx.zeros([count]);
      let off = 0;
      gs.forEach((g, i) => {
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
    zeros: (shape) => ctx.zeros(shape, true),
    adamw(param, m, v, c, guard) {
      // a pending clipping is applied by this kernel as it reads the gradient: no pass of its own
      const { grad: g, clip: clipped } = grads.takeGrad(param);
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
        const g = grads.gradOf(p);
        ctx.axpy(0, g, factor, g);
      }
    },
  };
}
