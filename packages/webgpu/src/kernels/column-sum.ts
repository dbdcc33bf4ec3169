/*
 * Column sums of a [rows, cols] matrix whose entries are given by a WGSL expression:
 *   out[c] = Σ_{r < rows} term(r, c)
 * (the reductions behind bias, D, A and norm-weight gradients: many rows, few columns).
 * Stage 1 evaluates `term` and sums blocks of ROWS_PER_GROUP rows into partial[rowBlock, cols];
 * their reader, or the split-K sum kernel before any other read, adds the blocks up in order
 * (ops/column-sum.ts). Each group covers 64 columns (coalesced reads along a row) × 4 lanes of
 * rows; the lanes and the blocks are added in a fixed order, so the result is the same on every
 * run (no atomics). With `acc` set (a gradient's running sums, or partials pending there) the
 * sums are added to `partial` instead of stored.
 */
import { type BufferSpec, defineKernel, type Kernel, type ParamType } from "../kernel-def.js";

export const COLS_PER_GROUP = 64;
const LANES = 4;
/** Rows summed by one workgroup (each lane sums ROWS_PER_GROUP / LANES rows in order). */
export const ROWS_PER_GROUP = 256;

/**
 * A stage-1 kernel: `term` is a WGSL expression in `r` and `c` (u32) over the declared buffers
 * and `p.<param>`; `helpers` is WGSL placed before it (functions it calls). The kernel also has
 * params rows, cols, acc and a buffer `partial` (declared last).
 */
export function columnSumKernel(spec: {
  name: string;
  params?: Record<string, ParamType>;
  buffers: Record<string, BufferSpec>;
  term: string;
  helpers?: string;
}): Kernel {
  return defineKernel({
    name: spec.name,
    params: { rows: "u32", cols: "u32", acc: "u32", ...spec.params },
    buffers: { ...spec.buffers, partial: "rw" },
    body: `${spec.helpers ?? ""}
fn term(r: u32, c: u32) -> f32 { return ${spec.term}; }
var<workgroup> lanes: array<f32, ${COLS_PER_GROUP * LANES}>;
@compute @workgroup_size(${COLS_PER_GROUP}, ${LANES})
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let c = wg.x * ${COLS_PER_GROUP}u + lid.x;
  let r0 = wg.y * ${ROWS_PER_GROUP}u;
  let r1 = min(r0 + ${ROWS_PER_GROUP}u, p.rows);
  var s = 0.0;
  if (c < p.cols) {
    for (var r = r0 + lid.y; r < r1; r += ${LANES}u) { s += term(r, c); }
  }
  lanes[lid.y * ${COLS_PER_GROUP}u + lid.x] = s;
  workgroupBarrier();
  if (lid.y == 0u && c < p.cols) {
    var t = lanes[lid.x];
    for (var l = 1u; l < ${LANES}u; l++) { t += lanes[l * ${COLS_PER_GROUP}u + lid.x]; }
    let o = wg.y * p.cols + c;
    if (p.acc != 0u) { partial[o] = partial[o] + t; } else { partial[o] = t; }
  }
}`,
  });
}

/** Plain column sums of a [rows, cols] buffer `src`. */
export const columnSumStage = columnSumKernel({
  name: "columnSum",
  buffers: { src: "read" },
  term: "src[r * p.cols + c]",
});

/**
 * WGSL for a kernel that runs a column sum's stage 1 beside its own work in the same dispatch
 * (a norm's backward and its weight gradient: one dispatch instead of two). Defines
 * `<pre>columnRole(j, li)`: workgroup j of the column sum (column group j % colGroups, row block
 * j / colGroups) with `threads` threads (a multiple of 64: threads/64 lanes of rows, summed in
 * the same fixed order as `columnSumKernel`'s) over `term` (a WGSL expression in r and c). Needs
 * the params <pre>colRows (the rows summed), <pre>cols, <pre>colGroups, <pre>acc and a buffer
 * `<pre>partial` (`columnRoleDecl`); a prefix lets one kernel hold several column sums. Call it
 * from uniform control flow (a branch on the workgroup id).
 */
export function columnRoleWgsl(threads: number, term: string, pre = ""): string {
  const lanes = threads / COLS_PER_GROUP;
  if (!Number.isInteger(lanes) || lanes < 1)
    throw new Error(`webgpu columnRoleWgsl: ${threads} threads is not a multiple of 64`);
  return `
fn ${pre}colTerm(r: u32, c: u32) -> f32 { return ${term}; }
var<workgroup> ${pre}colLanes: array<f32, ${threads}>;
fn ${pre}columnRole(j: u32, li: u32) {
  let lx = li % ${COLS_PER_GROUP}u;
  let ly = li / ${COLS_PER_GROUP}u;
  let c = (j % p.${pre}colGroups) * ${COLS_PER_GROUP}u + lx;
  let blk = j / p.${pre}colGroups;
  let r0 = blk * ${ROWS_PER_GROUP}u;
  let r1 = min(r0 + ${ROWS_PER_GROUP}u, p.${pre}colRows);
  var s = 0.0;
  if (c < p.${pre}cols) {
    for (var r = r0 + ly; r < r1; r += ${lanes}u) { s += ${pre}colTerm(r, c); }
  }
  ${pre}colLanes[ly * ${COLS_PER_GROUP}u + lx] = s;
  workgroupBarrier();
  if (ly == 0u && c < p.${pre}cols) {
    var t = ${pre}colLanes[lx];
    for (var l = 1u; l < ${lanes}u; l++) { t += ${pre}colLanes[l * ${COLS_PER_GROUP}u + lx]; }
    let o = blk * p.${pre}cols + c;
    if (p.${pre}acc != 0u) { ${pre}partial[o] = ${pre}partial[o] + t; } else { ${pre}partial[o] = t; }
  }
}`;
}

/** The params and buffer `columnRoleWgsl(…, pre)` needs (add colJobs-like counts yourself). */
export function columnRoleDecl(pre = ""): {
  params: Record<string, ParamType>;
  buffers: Record<string, BufferSpec>;
} {
  return {
    params: {
      [`${pre}colRows`]: "u32",
      [`${pre}cols`]: "u32",
      [`${pre}colGroups`]: "u32",
      [`${pre}acc`]: "u32",
    },
    buffers: { [`${pre}partial`]: "rw" },
  };
}
