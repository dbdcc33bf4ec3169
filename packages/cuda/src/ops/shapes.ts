/*
 * Shape helpers of the CUDA ops: one-line errors naming the op and the offending shape, as the
 * CPU ops give them.
 */
import type { CudaTensor } from "../cuda-tensor.js";

/** The size of the last axis of `t` and the number of rows before it. */
export function rowsOf(t: CudaTensor): { rows: number; cols: number } {
  const cols = t.shape[t.shape.length - 1] ?? 1;
  return { rows: cols === 0 ? 0 : t.size / cols, cols };
}

/** Throw `op: name has shape [..], expected [..]` unless `t` has `shape`. */
export function expectShape(
  op: string,
  name: string,
  t: CudaTensor,
  shape: readonly number[],
): void {
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))
    throw new Error(`${op}: ${name} has shape [${t.shape}], expected [${shape}]`);
}

/** Throw unless `cond`. */
export function expect(cond: boolean, message: string): asserts cond {
  if (!cond) throw new Error(message);
}
