/** Deterministic column sums on the device (kernels/column-sum.ts), not recorded. */
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import type { Kernel } from "../kernel-def.js";
import { COLS_PER_GROUP, columnSumStage, ROWS_PER_GROUP } from "../kernels/column-sum.js";
import type { GradTarget } from "../tape.js";

/**
 * out[c] = Σ_r term(r, c) for a stage-1 `kernel` made by `columnSumKernel`, with its buffers and
 * extra params; returns a [cols] tensor (or `shape` when given). With `into` (a gradient target,
 * tape.ts) the last stage writes, or adds, the sums there and returns its tensor.
 */
export function columnSum(
  ctx: GpuContext,
  kernel: Kernel,
  buffers: Record<string, GPUBuffer>,
  params: Record<string, number>,
  rows: number,
  cols: number,
  shape: readonly number[] = [cols],
  into?: GradTarget,
): GpuTensor {
  const colGroups = Math.max(1, Math.ceil(cols / COLS_PER_GROUP));
  let blocks = Math.max(1, Math.ceil(rows / ROWS_PER_GROUP));
  const last = () => into?.out ?? emptyLike(ctx, shape);
  const acc = () => (into?.accumulate ? 1 : 0);
  let partial = blocks === 1 ? last() : emptyLike(ctx, [blocks, cols]);
  ctx.run(
    kernel,
    { ...buffers, partial: partial.buffer },
    { ...params, rows, cols, acc: blocks === 1 ? acc() : 0 },
    [colGroups, blocks],
  );
  while (blocks > 1) {
    const n = blocks;
    blocks = Math.ceil(n / ROWS_PER_GROUP);
    const next = blocks === 1 ? last() : emptyLike(ctx, [blocks, cols]);
    ctx.run(
      columnSumStage,
      { src: partial.buffer, partial: next.buffer },
      { rows: n, cols, acc: blocks === 1 ? acc() : 0 },
      [colGroups, blocks],
    );
    partial.dispose();
    partial = next;
  }
  return partial;
}

/** Σ over the rows of `x` read as [rows, cols] (a plain column sum; cols = 1: the sum of all). */
export function sumColumns(
  x: GpuTensor,
  cols: number,
  shape: readonly number[] = [cols],
  into?: GradTarget,
): GpuTensor {
  return columnSum(x.ctx, columnSumStage, { src: x.buffer }, {}, x.size / cols, cols, shape, into);
}
