/**
 * Global-norm gradient clipping on the device, mirroring @loop/tensor's gradNorm and
 * clipGradNorm: n = sqrt(Σ_p Σ_i g²); when n is finite and > maxNorm every gradient is scaled by
 * maxNorm / (n + 1e-6). Nothing is read back: both return n as a one-element GPU tensor (read it
 * when logging; NaN or Infinity when a gradient is not finite, and nothing is scaled then).
 * Each gradient's Σ g² is the fixed-order chunked reduction; the per-parameter sums are added in
 * parameter order.
 */
import type { GpuContext } from "../gpu-context.js";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { clipScaleKernel, normFinishKernel, OPTIM_GROUP } from "../kernels/optim.js";
import { reduceToShape } from "../ops/broadcast.js";
import { copyBlock } from "../ops/shape.js";
import type { GpuNamedParameter } from "./adamw.js";

function withGrads(params: readonly GpuNamedParameter[]): GpuTensor[] {
  return params.filter((p) => p.tensor.requiresGrad && p.tensor.grad).map((p) => p.tensor.grad!);
}

function normOf(ctx: GpuContext, grads: readonly GpuTensor[]): GpuTensor {
  const parts = emptyLike(ctx, [Math.max(1, grads.length)]);
  grads.forEach((g, k) => {
    const sq = reduceToShape(g, [1], { square: true, fresh: true });
    copyBlock({ t: sq, ld: 1 }, { t: parts, ld: 1, off: k }, 1, 1);
  });
  const norm = emptyLike(ctx, [1]);
  ctx.run(
    normFinishKernel,
    { parts: parts.buffer, norm: norm.buffer },
    { count: grads.length },
    [1],
  );
  return norm;
}

function contextOf(op: string, params: readonly GpuNamedParameter[]): GpuContext {
  const first = params[0];
  if (!first) throw new Error(`webgpu ${op}: no parameters (their device is unknown)`);
  return first.tensor.ctx;
}

/** sqrt(Σ g²) over the gradients of `params` (a one-element tensor; 0 when none has one). */
export function gradNorm(params: readonly GpuNamedParameter[]): GpuTensor {
  return normOf(contextOf("gradNorm", params), withGrads(params));
}

/** Scale the gradients in place to a global norm of at most `maxNorm`; returns the norm before. */
export function clipGradNorm(params: readonly GpuNamedParameter[], maxNorm: number): GpuTensor {
  if (!(maxNorm > 0)) throw new Error(`webgpu clipGradNorm: maxNorm must be > 0, got ${maxNorm}`);
  const ctx = contextOf("clipGradNorm", params);
  const grads = withGrads(params);
  const norm = normOf(ctx, grads);
  for (const g of grads)
    ctx.run(
      clipScaleKernel,
      { norm: norm.buffer, g: g.buffer },
      { n: g.size, maxNorm },
      grid(g.size, OPTIM_GROUP),
    );
  return norm;
}
