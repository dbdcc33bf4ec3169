/*
 * The mean of x over the positions whose target is not IGNORE_INDEX, on GPU tensors, as
 * @loop/tensor's maskedMean (`TensorOps.maskedMean`; kernels/masked-mean.ts): [1], NaN with no
 * gradient when every target is ignored. The count stays on the device (nothing is read back).
 */
import { IGNORE_INDEX, shapeStr } from "@loop/tensor";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  MASKED_MEAN_GROUP,
  maskedMeanBackwardKernel,
  maskedMeanKernel,
} from "../kernels/masked-mean.js";
import { recordGpu } from "../tape.js";

/** Σ x over the positions whose target ≠ IGNORE_INDEX, over their count: [1]; differentiable. */
export function maskedMean(x: GpuTensor, targets: GpuTensor): GpuTensor {
  if (targets.dtype !== "i32")
    throw new Error("webgpu maskedMean: targets must be an i32 tensor (upload an Int32Array)");
  if (x.size !== targets.size)
    throw new Error(
      `webgpu maskedMean: ${x.size} values for ${targets.size} targets (${shapeStr(x.shape)} vs ${shapeStr(targets.shape)})`,
    );
  const ctx = x.ctx;
  const n = x.size;
  const out = emptyLike(ctx, [1]);
  const count = emptyLike(ctx, [1]);
  const params = { n, ignore: IGNORE_INDEX };
  ctx.run(maskedMeanKernel, { x, t: targets, out, count }, params, [1]);
  recordGpu(
    "maskedMean",
    [x],
    [out],
    ([g]) => {
      const gx = emptyLike(ctx, x.shape);
      ctx.run(
        maskedMeanBackwardKernel,
        { t: targets, count, g: g!, gx },
        params,
        grid(n, MASKED_MEAN_GROUP),
      );
      return [gx];
    },
    [], // the backward reads the targets and the count, not x or out
  );
  return out;
}
