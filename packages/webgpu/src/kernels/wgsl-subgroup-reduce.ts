/*
 * WGSL: the row kernels' reductions (row-reduce.ts: `groupSum`, `rowSum`, `rowMax` over a
 * workgroup of ROW_GROUP threads) for devices with the `subgroups` feature, giving the same bits
 * as the plain tree. The plain tree halves the stride from ROW_GROUP/2 to 1 with a workgroup
 * barrier after each level; here the levels down to the device's smallest subgroup size `min`
 * (adapter info `subgroupMinSize`, compiled in) run the same way, and the last log2(min) levels run
 * in registers: lane l of every subgroup loads position l of the tree and adds the value of lane
 * l + s (`subgroupShuffleDown`) for s = min/2 … 1 — the same pairs in the same order as the
 * barrier levels, so lane 0 ends with the plain tree's total, bit for bit, and broadcasts it.
 * That drops log2(min) barriers of the ~10 per reduction (5 on a GPU with 32-wide subgroups).
 *
 * The lane's id comes through the entry point (row-reduce.ts's `rowEntry` stores it in `sgLane`),
 * so the kernels' own code calls `rowSum(v, li)` and `rowMax(v, li)` unchanged. Lanes need not be
 * consecutive threads: each lane reads the tree position of its own lane id.
 */

/** The reductions with the last log2(min) tree levels in subgroup registers. */
export function rowReduceSubgroupWgsl(group: number, min: number): string {
  if (!(min >= 2 && min <= group && Number.isInteger(Math.log2(min))))
    throw new Error(`webgpu: subgroup size ${min} must be a power of two in [2, ${group}]`);
  const tail = (op: (a: string, b: string) => string) => `
  var x = red[sgLane % ${min}u];
  for (var s = ${min / 2}u; s > 0u; s >>= 1u) { x = ${op("x", "subgroupShuffleDown(x, s)")}; }
  let total = subgroupBroadcast(x, 0u);
  workgroupBarrier();
  return total;`;
  const tree = (op: (a: string, b: string) => string) => `
  for (var s = ${group / 2}u; s >= ${min}u; s >>= 1u) {
    if (li < s) { red[li] = ${op("red[li]", "red[li + s]")}; }
    workgroupBarrier();
  }`;
  const add = (a: string, b: string) => `${a} + ${b}`;
  const mx = (a: string, b: string) => `max(${a}, ${b})`;
  return `
var<workgroup> red: array<f32, ${group}>;
var<private> sgLane: u32;
fn groupSum(li: u32, v: f32) -> f32 {
  red[li] = v;
  workgroupBarrier();${tree(add)}${tail(add)}
}

fn rowSum(v: f32, li: u32) -> f32 {
  return groupSum(li, v);
}

fn rowMax(v: f32, li: u32) -> f32 {
  red[li] = v;
  workgroupBarrier();${tree(mx)}${tail(mx)}
}`;
}
