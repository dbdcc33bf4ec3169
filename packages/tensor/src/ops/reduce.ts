/*
 * Reductions. sum(x) = Σ x (∂x = g broadcast); mean(x) = Σ x / n; sumLast(x) sums the last axis
 * ([..., n] → [...]), meanLast divides by n.
 */
import { record1 } from "../autograd/node.js";
import { allocF32, type Tensor } from "../tensor.js";

/** The sum of all entries, [1]; differentiable. */
export function sum(x: Tensor): Tensor {
  let s = 0;
  const d = x.data;
  for (let i = 0; i < d.length; i++) s += d[i]!;
  return record1("sum", [x], Float32Array.of(s), [1], ([g]) => [allocF32(x.size).fill(g![0]!)]);
}

/** The mean of all entries, [1] (NaN for an empty tensor); differentiable. */
export function mean(x: Tensor): Tensor {
  const n = x.size;
  let s = 0;
  const d = x.data;
  for (let i = 0; i < n; i++) s += d[i]!;
  return record1("mean", [x], Float32Array.of(n === 0 ? Number.NaN : s / n), [1], ([g]) => [
    allocF32(n).fill(g![0]! / n),
  ]);
}

function reduceLast(op: string, x: Tensor, divide: boolean): Tensor {
  const n = x.lastDim;
  const rows = x.rows;
  const y = allocF32(rows);
  const d = x.data;
  const f = divide ? 1 / n : 1;
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let j = 0; j < n; j++) s += d[r * n + j]!;
    y[r] = s * f;
  }
  return record1(op, [x], y, x.shape.slice(0, -1), ([g]) => {
    const gx = allocF32(x.size);
    for (let r = 0; r < rows; r++) gx.fill(g![r]! * f, r * n, r * n + n);
    return [gx];
  });
}

/** The sum over the last axis; differentiable. */
export const sumLast = (x: Tensor): Tensor => reduceLast("sumLast", x, false);
/** The mean over the last axis; differentiable. */
export const meanLast = (x: Tensor): Tensor => reduceLast("meanLast", x, true);
