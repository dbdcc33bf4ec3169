/*
 * Elementwise unary ops on GPU tensors, mirroring @loop/tensor's exp, neg, log, sigmoid,
 * logsigmoid, relu, silu and softplus (formulas in kernels/unary.ts); `unary(kind, x)` is the
 * backend contract's kernel (`TensorOps.unary`, every UnaryKind).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { UNARY_GROUP, type UnaryName, unaryKernel } from "../kernels/unary.js";
import { gradTarget, recordGpu } from "../tape.js";
import { partialSumInput } from "./partial-sums.js";

/** The elementwise op `op` of x on the GPU (one dispatch each way); differentiable. */
export function unary(op: UnaryName, x: GpuTensor): GpuTensor {
  const ctx = x.ctx;
  const y = emptyLike(ctx, x.shape);
  const n = x.size;
  const g0 = grid(n, UNARY_GROUP);
  ctx.run(unaryKernel(op, "forward"), { a: x, out: y }, { n }, g0);
  recordGpu(op, [x], [y], ([g]) => {
    const t = gradTarget(x);
    const gIn = partialSumInput(g!, "gb");
    ctx.run(
      unaryKernel(op, "backward"),
      { a: x, yb: y, gb: gIn.buffer, out: t.out },
      { n, acc: t.accumulate ? 1 : 0, ...gIn.params },
      g0,
    );
    return [t.out];
  });
  return y;
}

/** e^x on the GPU, elementwise; differentiable. */
export const exp = (x: GpuTensor): GpuTensor => unary("exp", x);
/** −x on the GPU, elementwise; differentiable. */
export const neg = (x: GpuTensor): GpuTensor => unary("neg", x);
/** −e^x on the GPU in one op (the SSM's decay rates A from their logs); differentiable. */
export const negExp = (x: GpuTensor): GpuTensor => unary("negExp", x);
/** The natural logarithm on the GPU, elementwise; differentiable. */
export const log = (x: GpuTensor): GpuTensor => unary("log", x);
/** The logistic sigmoid on the GPU, elementwise; differentiable. */
export const sigmoid = (x: GpuTensor): GpuTensor => unary("sigmoid", x);
/** log sigmoid(x) on the GPU, elementwise, stable for large |x|; differentiable. */
export const logsigmoid = (x: GpuTensor): GpuTensor => unary("logsigmoid", x);
/** max(x, 0) on the GPU, elementwise (gradient 0 where x ≤ 0); differentiable. */
export const relu = (x: GpuTensor): GpuTensor => unary("relu", x);
/** silu(x) = x · sigmoid(x) on the GPU, elementwise; differentiable. */
export const silu = (x: GpuTensor): GpuTensor => unary("silu", x);
/** softplus(x) = log(1 + e^x) on the GPU, elementwise; differentiable. */
export const softplus = (x: GpuTensor): GpuTensor => unary("softplus", x);
