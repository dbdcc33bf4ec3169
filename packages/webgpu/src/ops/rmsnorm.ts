/*
 * RMSNorm on GPU tensors, mirroring @loop/tensor's rmsnorm(x, w, eps = 1e-5):
 * x [..., D], w [D] → y [..., D] (formulas in kernels/rmsnorm.ts).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { rmsnormBackwardKernel, rmsnormForwardKernel } from "../kernels/rmsnorm.js";
import { gradTarget, recordGpu } from "../tape.js";
import { columnRoleParams, columnSumFinish, columnSumStart } from "./column-sum.js";
import { placeholder } from "./optional-inputs.js";
import { partialSumInput } from "./partial-sums.js";

/** RMSNorm over the last axis on the GPU, x / sqrt(mean(x²) + eps) · w; differentiable. */
export function rmsnorm(x: GpuTensor, w: GpuTensor, eps = 1e-5): GpuTensor {
  const D = x.lastDim;
  if (w.rank !== 1 || w.size !== D)
    throw new Error(
      `webgpu rmsnorm: weight must be [${D}] for input [${x.shape.join(",")}], got [${w.shape.join(",")}]`,
    );
  const ctx = x.ctx;
  const rows = x.rows;
  const y = emptyLike(ctx, x.shape);
  const rinv = emptyLike(ctx, [rows]);
  if (x.size === 0) return y;
  ctx.run(rmsnormForwardKernel, { x, w, rinv, y }, { rows, D, eps }, grid(rows, 1));
  recordGpu(
    "rmsnorm",
    [x, w],
    [y],
    ([g]) => {
      // ∂x straight into its destination (added to the residual stream's running sum); ∂w's
      // column sum starts in the same dispatch, into w's gradient
      const tx = x.requiresGrad ? gradTarget(x) : null;
      const gx = tx?.out ?? null;
      const cs = w.requiresGrad ? columnSumStart(ctx, rows, D, [D], gradTarget(w)) : null;
      const rowJobs = gx ? rows : 0;
      // g may still be the ∂x GEMM's split-K partials: the kernel adds them up as it reads
      const gIn = partialSumInput(g!, "g");
      ctx.run(
        rmsnormBackwardKernel,
        {
          x,
          w,
          rinv,
          g: gIn.buffer,
          gx: gx ?? placeholder(ctx),
          partial: cs?.partial ?? placeholder(ctx),
        },
        {
          rows: rowJobs,
          D,
          wantX: gx ? 1 : 0,
          accX: tx?.accumulate ? 1 : 0,
          ...gIn.params,
          ...columnRoleParams(cs, "", D),
          colJobs: cs?.jobs ?? 0,
        },
        grid(rowJobs + (cs?.jobs ?? 0), 1),
      );
      return [gx, cs ? columnSumFinish(cs) : null];
      // its output is not read (a projection under mixed precision may let it go: tape.ts)
    },
    [x, w],
  );
  return y;
}
