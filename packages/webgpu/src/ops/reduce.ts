/*
 * Reductions on GPU tensors, mirroring @loop/tensor's reduce.ts: sum(x) and mean(x) → [1];
 * sumLast and meanLast over the last axis ([..., n] → [...]). Each is the fixed-order chunked
 * broadcast reduction of ops/broadcast.ts; the backward broadcasts g (÷ n for the means) back.
 */
import { GpuTensor } from "../gpu-tensor.js";
import { recordGpu } from "../tape.js";
import { expandTo, reduceToShape } from "./broadcast.js";

function reduceAll(op: string, x: GpuTensor, divide: boolean): GpuTensor {
  if (divide && x.size === 0) throw new Error(`webgpu ${op}: mean of an empty tensor`);
  const f = divide ? 1 / x.size : 1;
  const y = reduceToShape(x, [1], { alpha: f, fresh: true });
  recordGpu(op, [x], [y], ([g]) => [expandTo(g!, x.shape, f)]);
  return y;
}

function reduceLast(op: string, x: GpuTensor, divide: boolean): GpuTensor {
  const n = x.lastDim;
  const lead = x.shape.slice(0, -1);
  if (divide && n === 0) throw new Error(`webgpu ${op}: mean over an empty last axis`);
  const f = divide ? 1 / n : 1;
  const keep = [...lead, 1];
  const y = new GpuTensor(x.ctx, lead, {
    viewOf: reduceToShape(x, keep, { alpha: f, fresh: true }),
  });
  recordGpu(op, [x], [y], ([g]) => [
    expandTo(new GpuTensor(x.ctx, keep, { viewOf: g! }), x.shape, f),
  ]);
  return y;
}

/** The sum of all entries on the GPU, [1]; differentiable. */
export const sum = (x: GpuTensor): GpuTensor => reduceAll("sum", x, false);
/** The mean of all entries on the GPU, [1]; differentiable. */
export const mean = (x: GpuTensor): GpuTensor => reduceAll("mean", x, true);
/** The sum over the last axis on the GPU; differentiable. */
export const sumLast = (x: GpuTensor): GpuTensor => reduceLast("sumLast", x, false);
/** The mean over the last axis on the GPU; differentiable. */
export const meanLast = (x: GpuTensor): GpuTensor => reduceLast("meanLast", x, true);
