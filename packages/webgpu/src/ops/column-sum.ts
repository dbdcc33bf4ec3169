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
  const plan = columnSumStart(ctx, rows, cols, shape, into);
  ctx.run(
    kernel,
    { ...buffers, partial: plan.partial.buffer },
    { ...params, rows, cols, acc: plan.acc },
    [plan.colGroups, plan.blocks],
  );
  return columnSumFinish(plan);
}

/**
 * A column sum whose stage 1 runs inside another kernel's dispatch (kernels/column-sum.ts,
 * `columnRoleWgsl`): that dispatch adds `jobs` workgroups with params { colRows: rows, cols,
 * colGroups, acc } and binds `partial`; then `columnSumFinish` runs the later stages, if any.
 */
export interface ColumnSumPlan {
  ctx: GpuContext;
  rows: number;
  cols: number;
  colGroups: number;
  blocks: number;
  /** Workgroups of stage 1. */
  jobs: number;
  partial: GpuTensor;
  acc: 0 | 1;
  last: () => GpuTensor;
  into?: GradTarget;
}

export function columnSumStart(
  ctx: GpuContext,
  rows: number,
  cols: number,
  shape: readonly number[] = [cols],
  into?: GradTarget,
): ColumnSumPlan {
  const colGroups = Math.max(1, Math.ceil(cols / COLS_PER_GROUP));
  const blocks = Math.max(1, Math.ceil(rows / ROWS_PER_GROUP));
  const last = () => into?.out ?? emptyLike(ctx, shape);
  const acc = blocks === 1 && into?.accumulate ? 1 : 0;
  const partial = blocks === 1 ? last() : emptyLike(ctx, [blocks, cols]);
  return { ctx, rows, cols, colGroups, blocks, jobs: colGroups * blocks, partial, acc, last, into };
}

/**
 * The params of stage 1 run as a role of another kernel (see ColumnSumPlan), named with the
 * role's prefix; without a plan, those of a role with no work (`cols` columns).
 */
export function columnRoleParams(
  plan: ColumnSumPlan | null,
  pre = "",
  cols = 1,
): Record<string, number> {
  return {
    [`${pre}colRows`]: plan?.rows ?? 0,
    [`${pre}cols`]: plan?.cols ?? cols,
    [`${pre}colGroups`]: plan?.colGroups ?? 1,
    [`${pre}acc`]: plan?.acc ?? 0,
  };
}

/** After stage 1: the later stages until one row is left; returns the sums' tensor. */
export function columnSumFinish(plan: ColumnSumPlan): GpuTensor {
  const { ctx, cols, colGroups, into } = plan;
  let blocks = plan.blocks;
  let partial = plan.partial;
  while (blocks > 1) {
    const n = blocks;
    blocks = Math.ceil(n / ROWS_PER_GROUP);
    const next = blocks === 1 ? plan.last() : emptyLike(ctx, [blocks, cols]);
    ctx.run(
      columnSumStage,
      { src: partial.buffer, partial: next.buffer },
      { rows: n, cols, acc: blocks === 1 && into?.accumulate ? 1 : 0 },
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
