/*
 * `TensorOps.unary` (@loop/tensor's UnaryKind) on the CUDA backend: one elementwise kernel per
 * kind (kernels/elementwise.cu), each with its backward on the tape. A backward reads the output
 * where the derivative is a function of it (eˣ, −eˣ, σ, relu) and the input where it is not
 * (logsigmoid: σ(−x) from y would lose the tiny values at large x). −x is the scaling kernel.
 */
import type { UnaryKind } from "@loop/tensor";
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import type { KernelName } from "../kernel-table.js";
import { record } from "../tape.js";

/** A kind's forward and backward kernels; `from` what its backward reads besides g. */
interface UnaryKernels {
  fwd: KernelName;
  bwd: KernelName;
  from: "x" | "y";
}

const KERNELS: Record<Exclude<UnaryKind, "neg">, UnaryKernels> = {
  exp: { fwd: "exp_fwd", bwd: "mul_bwd", from: "y" },
  // the derivative of −eˣ is −eˣ itself: the same backward as eˣ
  negExp: { fwd: "negexp_fwd", bwd: "mul_bwd", from: "y" },
  sigmoid: { fwd: "sigmoid_fwd", bwd: "sigmoid_bwd", from: "y" },
  logsigmoid: { fwd: "logsigmoid_fwd", bwd: "logsigmoid_bwd", from: "x" },
  relu: { fwd: "relu_fwd", bwd: "relu_bwd", from: "y" },
};

/** −x. */
function neg(ctx: CudaContext, x: CudaTensor): CudaTensor {
  const y = ctx.empty(x.shape);
  ctx.axpy(-1, x, 0, y);
  record(ctx, "neg", [x], [y], ([g]) => {
    const gx = ctx.empty(x.shape);
    ctx.axpy(-1, g!, 0, gx);
    return [gx];
  });
  return y;
}

/** The elementwise `kind` of x (UnaryKind). */
export function unary(ctx: CudaContext, kind: UnaryKind, x: CudaTensor): CudaTensor {
  if (kind === "neg") return neg(ctx, x);
  const k = KERNELS[kind];
  if (!k) throw new Error(`unary: unknown kind "${kind}"`);
  const y = ctx.empty(x.shape);
  const n = x.size;
  if (n > 0) ctx.run(k.fwd, ctx.elems(n), [n, x, y]);
  record(ctx, kind, [x], [y], ([g]) => {
    const gx = ctx.empty(x.shape);
    if (n > 0) ctx.run(k.bwd, ctx.elems(n), [n, 0, g!, k.from === "x" ? x : y, gx]);
    return [gx];
  });
  return y;
}
