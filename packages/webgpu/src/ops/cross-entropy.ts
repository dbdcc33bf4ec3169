/*
 * Log-softmax and cross-entropy on GPU tensors, mirroring @loop/tensor's loss.ts:
 * logSoftmax(x), crossEntropyPerToken(logits, targets) and crossEntropy(logits, targets) with
 * targets an i32 tensor whose IGNORE_INDEX (−100) rows count for nothing. Formulas in
 * kernels/cross-entropy.ts. The targets are not read back: an invalid target gives NaN.
 */
import { IGNORE_INDEX } from "@loop/tensor";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  CE_GROUP,
  ceBackwardKernel,
  ceForwardKernel,
  ceMeanBackwardKernel,
  ceMeanKernel,
  logSoftmaxBackwardKernel,
  logSoftmaxForwardKernel,
} from "../kernels/cross-entropy.js";
import { recordGpu } from "../tape.js";

/** log softmax over the last axis on the GPU; differentiable. */
export function logSoftmax(x: GpuTensor): GpuTensor {
  const ctx = x.ctx;
  const V = x.lastDim;
  const rows = x.rows;
  const y = emptyLike(ctx, x.shape);
  if (x.size === 0) return y;
  ctx.run(logSoftmaxForwardKernel, { x, y }, { rows, V }, grid(rows, 1));
  recordGpu("logSoftmax", [x], [y], ([g]) => {
    const gx = emptyLike(ctx, x.shape);
    ctx.run(logSoftmaxBackwardKernel, { y, g: g!, gx }, { rows, V }, grid(rows, 1));
    return [gx];
  });
  return y;
}

function checkTargets(logits: GpuTensor, targets: GpuTensor, op: string): void {
  if (targets.dtype !== "i32")
    throw new Error(`webgpu ${op}: targets must be an i32 tensor (upload an Int32Array)`);
  if (logits.shape.slice(0, -1).join() !== targets.shape.join())
    throw new Error(
      `webgpu ${op}: targets [${targets.shape.join(",")}] do not match logits [${logits.shape.join(",")}]`,
    );
}

/**
 * Cross-entropy per token on the GPU: logits [..., V] against i32 targets [...] (−100 gives 0);
 * differentiable.
 */
export function crossEntropyPerToken(logits: GpuTensor, targets: GpuTensor): GpuTensor {
  checkTargets(logits, targets, "crossEntropyPerToken");
  const ctx = logits.ctx;
  const V = logits.lastDim;
  const rows = targets.size;
  const loss = emptyLike(ctx, targets.shape);
  const lse = emptyLike(ctx, [rows]);
  if (rows === 0) return loss;
  const params = { rows, V, ignore: IGNORE_INDEX };
  ctx.run(ceForwardKernel, { x: logits, t: targets, lse, loss }, params, grid(rows, 1));
  recordGpu("crossEntropyPerToken", [logits], [loss], ([g]) => {
    const gx = emptyLike(ctx, logits.shape);
    ctx.run(
      ceBackwardKernel,
      { x: logits, t: targets, lse, g: g!, gx },
      params,
      grid(rows * V, CE_GROUP),
    );
    return [gx];
  });
  return loss;
}

/** Mean CE over the rows whose target is not IGNORE_INDEX (NaN when there are none): shape [1]. */
export function crossEntropy(logits: GpuTensor, targets: GpuTensor): GpuTensor {
  const per = crossEntropyPerToken(logits, targets);
  const ctx = logits.ctx;
  const rows = targets.size;
  const out = emptyLike(ctx, [1]);
  const count = emptyLike(ctx, [1]);
  const params = { rows, ignore: IGNORE_INDEX };
  ctx.run(ceMeanKernel, { loss: per, t: targets, out, count }, params, [1]);
  recordGpu("crossEntropy", [per], [out], ([g]) => {
    const gl = emptyLike(ctx, per.shape);
    ctx.run(ceMeanBackwardKernel, { t: targets, count, g: g!, gl }, params, grid(rows, CE_GROUP));
    return [gl];
  });
  return out;
}
