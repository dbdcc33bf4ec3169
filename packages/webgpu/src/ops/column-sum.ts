/*
 * Deterministic column sums on the device (kernels/column-sum.ts), not recorded. Stage 1 sums
 * blocks of ROWS_PER_GROUP rows; with more than one block their partials [blocks, cols] stay in
 * the result unsummed (`partialsTarget`, ops/gemm.ts): the consumer reading it next may add them
 * up itself, a weight's gradient gathers those of all its applications and is summed once when
 * read, and any other reader gets the sum (in block order) first.
 */
import type { Bindings, GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { groups, type Kernel } from "../kernel-def.js";
import { COLS_PER_GROUP, columnSumStage, ROWS_PER_GROUP } from "../kernels/column-sum.js";
import type { GradTarget } from "../tape.js";
import { partialsTarget } from "./gemm.js";

/**
 * out[c] = Σ_r term(r, c) for a stage-1 `kernel` made by `columnSumKernel`, with its buffers and
 * extra params; returns a [cols] tensor (or `shape` when given). With `into` (a gradient target,
 * tape.ts) the sums are written, or added, there and its tensor is returned.
 */
export function columnSum(
  ctx: GpuContext,
  kernel: Kernel,
  buffers: Bindings,
  params: Record<string, number>,
  rows: number,
  cols: number,
  shape: readonly number[] = [cols],
  into?: GradTarget,
): GpuTensor {
  const plan = columnSumStart(ctx, rows, cols, shape, into);
  ctx.run(kernel, { ...buffers, partial: plan.partial }, { ...params, rows, cols, acc: plan.acc }, [
    plan.colGroups,
    plan.blocks,
  ]);
  return columnSumFinish(plan);
}

/**
 * A column sum whose stage 1 runs inside another kernel's dispatch (kernels/column-sum.ts,
 * `columnRoleWgsl`): that dispatch adds `jobs` workgroups with params { colRows: rows, cols,
 * colGroups, acc } and binds `partial`; then `columnSumFinish` returns the sums' tensor.
 */
export interface ColumnSumPlan {
  rows: number;
  cols: number;
  colGroups: number;
  blocks: number;
  /** Workgroups of stage 1. */
  jobs: number;
  /** Where stage 1 writes (acc 0) or adds (acc 1) its [blocks, cols] sums. */
  partial: GPUBuffer;
  acc: 0 | 1;
  out: GpuTensor;
  finish: () => void;
}

export function columnSumStart(
  ctx: GpuContext,
  rows: number,
  cols: number,
  shape: readonly number[] = [cols],
  into?: GradTarget,
): ColumnSumPlan {
  const colGroups = groups(cols, COLS_PER_GROUP);
  const blocks = groups(rows, ROWS_PER_GROUP);
  const out = into?.out ?? emptyLike(ctx, shape);
  const add = into?.accumulate ? 1 : 0;
  const plan = { rows, cols, colGroups, blocks, jobs: colGroups * blocks, out };
  if (blocks === 1) return { ...plan, partial: out.buffer, acc: add, finish: () => {} };
  const to = partialsTarget(
    ctx,
    { S: blocks, M: 1, N: cols, c: { buf: out.storage, ld: cols }, beta: add },
    out,
  );
  return { ...plan, partial: to.buf, acc: to.beta, finish: to.finish };
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

/** After stage 1: the sums' tensor (its value possibly still the blocks' partials). */
export function columnSumFinish(plan: ColumnSumPlan): GpuTensor {
  plan.finish();
  return plan.out;
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
