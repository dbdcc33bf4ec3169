/*
 * siluSplit on GPU tensors, mirroring @loop/tensor's siluSplit(x, widths): x [..., W] with widths
 * summing to W → y_k [..., w_k] = silu of the k-th column block (kernels/silu-split.ts).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  SILU_SPLIT_GROUP,
  siluSplitBackwardKernel,
  siluSplitForwardKernel,
} from "../kernels/silu-split.js";
import { recordGpu } from "../tape.js";
import { placeholder } from "./optional-inputs.js";
import { splitOffsets } from "./shape.js";

/** silu(x) split along the last axis into pieces of `widths`, on the GPU; differentiable. */
export function siluSplit(x: GpuTensor, widths: readonly number[]): GpuTensor[] {
  const offsets = splitOffsets("siluSplit", x, widths);
  const ctx = x.ctx;
  const rows = x.rows;
  const ldx = x.lastDim;
  const lead = x.shape.slice(0, -1);
  const outs = widths.map((w, k) => {
    const y = emptyLike(ctx, [...lead, w]);
    if (rows * w > 0)
      ctx.run(
        siluSplitForwardKernel,
        { x, y },
        { rows, w, off: offsets[k]!, ldx },
        grid(rows * w, SILU_SPLIT_GROUP),
      );
    return y;
  });
  recordGpu("siluSplit", [x], outs, (gys) => {
    const gx = emptyLike(ctx, x.shape);
    gys.forEach((g, k) => {
      const w = widths[k]!;
      if (rows * w === 0) return;
      ctx.run(
        siluSplitBackwardKernel,
        { x, g: g ?? placeholder(ctx), gx },
        { rows, w, off: offsets[k]!, ldx, hasG: g ? 1 : 0 },
        grid(rows * w, SILU_SPLIT_GROUP),
      );
    });
    return [gx];
  });
  return outs;
}
