/*
 * Log-softmax and per-token cross-entropy on GPU tensors, mirroring @loop/tensor's loss.ts:
 * logSoftmax(x) and crossEntropyPerToken(logits, targets) (the contract's `ceRows`) with targets
 * an i32 tensor whose IGNORE_INDEX (−100) rows count for nothing. Formulas in
 * kernels/cross-entropy.ts. The mean over the counted rows is `maskedMean` (masked-mean.ts);
 * cross-entropy itself is written once above the backends (@loop/tensor `crossEntropyOn`).
 * The targets are not read back: an invalid target gives NaN.
 */
import { IGNORE_INDEX } from "@loop/tensor";
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  CE_GROUP,
  ceBackwardKernel,
  ceForwardKernel,
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
