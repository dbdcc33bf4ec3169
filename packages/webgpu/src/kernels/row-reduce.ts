/*
 * WGSL for kernels that give one workgroup of ROW_GROUP threads to each row: the row index
 * (rows fold into a 2-D grid beyond 65535) and sum (wgsl-group-sum.ts) and max over the
 * workgroup as a fixed tree in workgroup memory, so a row's result is the same on every run. Each thread first reduces its
 * strided share of the row (j = li, li + ROW_GROUP, …) in increasing j.
 * Call the reductions from uniform control flow (every thread of the workgroup).
 */
import { defineKernel, type Kernel, type KernelSpec } from "../kernel-def.js";
import { columnRoleWgsl } from "./column-sum.js";
import { groupSumWgsl } from "./wgsl-group-sum.js";
import { rowReduceSubgroupWgsl } from "./wgsl-subgroup-reduce.js";

export const ROW_GROUP = 256;

export const ROW_REDUCE_WGSL = `${groupSumWgsl(ROW_GROUP)}

fn rowSum(v: f32, li: u32) -> f32 {
  return groupSum(li, v);
}

fn rowMax(v: f32, li: u32) -> f32 {
  red[li] = v;
  workgroupBarrier();
  for (var s = ${ROW_GROUP / 2}u; s > 0u; s >>= 1u) {
    if (li < s) { red[li] = max(red[li], red[li + s]); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}`;

/**
 * WGSL (after ROW_REDUCE_WGSL): rowLse(o, li) = ln Σ_{j<p.V} e^{x[o + j]}, max-shifted, for a
 * kernel with a buffer \`x\` and a param \`V\`; every thread gets it.
 */
export const ROW_LSE_WGSL = `
fn rowLse(o: u32, li: u32) -> f32 {
  var m = -3.402823e38;
  for (var j = li; j < p.V; j += ${ROW_GROUP}u) { m = max(m, x[o + j]); }
  m = rowMax(m, li);
  var s = 0.0;
  for (var j = li; j < p.V; j += ${ROW_GROUP}u) { s += exp(x[o + j] - m); }
  return m + log(rowSum(s, li));
}`;

/**
 * WGSL entry header: `row` (uniform across the workgroup) and `li`; rows past p.rows run `past`
 * (default: return). For the subgroup reductions (`sub`) it also binds the lane id (into `sgLane`).
 */
const rowEntry = (sub: boolean, past = "{ return; }") => `@compute @workgroup_size(${ROW_GROUP})
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) ng: vec3u${sub ? ", @builtin(subgroup_invocation_id) lane: u32" : ""}) {${sub ? "\n  sgLane = lane;" : ""}
  let row = wg.x + wg.y * ng.x;
  if (row >= p.rows) ${past}`;

/**
 * A kernel that gives one workgroup to each row: the row reductions, then `helpers` (WGSL
 * functions such as ROW_LSE_WGSL), then the entry header (rowEntry), which binds `row` and
 * `li`, and `main`, the rest of the entry's body with its closing brace.
 */
export function defineRowKernel(
  spec: Omit<KernelSpec, "body"> & { helpers?: readonly string[]; main: string },
): Kernel {
  const { helpers = [], main, ...rest } = spec;
  return defineKernel({
    ...rest,
    body: `${[ROW_REDUCE_WGSL, ...helpers, rowEntry(false)].join("\n")}${main}`,
    // where the device has subgroups: the same reductions, the same bits, fewer barriers
    subgroupBody: (min) =>
      `${[rowReduceSubgroupWgsl(ROW_GROUP, min), ...helpers, rowEntry(true)].join("\n")}${main}`,
  });
}

/**
 * A row kernel (as `defineRowKernel`) whose dispatch also runs a column sum's stage 1
 * (`columnRoleWgsl`, column-sum.ts): workgroups past p.rows are column-sum workgroups (p.colJobs
 * of them), so a norm's backward and its weight gradient take one dispatch. Adds the params
 * colRows, cols, colGroups, acc, colJobs and the buffer `partial` (declared last).
 */
export function defineRowKernelWithColumnSum(
  spec: Omit<KernelSpec, "body"> & { helpers?: readonly string[]; main: string; colTerm: string },
): Kernel {
  const { helpers = [], main, colTerm, ...rest } = spec;
  const role = columnRoleWgsl(ROW_GROUP, colTerm);
  // rows past p.rows are column-sum workgroups
  const past = `{
    if (row - p.rows < p.colJobs) { columnRole(row - p.rows, li); }
    return;
  }`;
  const entry = (sub: boolean) => rowEntry(sub, past);
  return defineKernel({
    ...rest,
    params: {
      ...rest.params,
      colRows: "u32",
      cols: "u32",
      colGroups: "u32",
      acc: "u32",
      colJobs: "u32",
    },
    buffers: { ...rest.buffers, partial: "rw" },
    body: `${[ROW_REDUCE_WGSL, role, ...helpers, entry(false)].join("\n")}${main}`,
    subgroupBody: (min) =>
      `${[rowReduceSubgroupWgsl(ROW_GROUP, min), role, ...helpers, entry(true)].join("\n")}${main}`,
  });
}
