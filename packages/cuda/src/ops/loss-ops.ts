/*
 * `TensorOps.ceRows` and `maskedMean` on the CUDA backend (kernels/loss.cu): the per-token
 * cross-entropy (one block per row: logsumexp kept for the backward, softmax − one-hot) and the
 * mean over the counted targets (one block, fixed order; N stays on the device for the
 * backward: nothing reads back). Positions whose target is IGNORE_INDEX give 0 and get no
 * gradient. The mean cross-entropy and the exit gate's objectives are written over these once
 * (@loop/tensor `crossEntropyOn`, @loop/exit-gate).
 */
import type { CudaContext } from "../context.js";
import type { CudaTensor } from "../cuda-tensor.js";
import { record } from "../tape.js";
import { expect, rowsOf } from "./shapes.js";

/** Per-token cross-entropy of logits [...S, V] against targets [...S]: [...S]. */
export function ceRows(ctx: CudaContext, logits: CudaTensor, targets: CudaTensor): CudaTensor {
  expect(logits.shape.length >= 1, `ceRows: logits of shape [${logits.shape}] have no class axis`);
  const { rows: M, cols: V } = rowsOf(logits);
  expect(
    targets.dtype === "i32" && targets.size === M,
    `ceRows: ${targets.size} ${targets.dtype} targets for ${M} rows of logits [${logits.shape}]`,
  );
  const loss = ctx.empty(logits.shape.slice(0, -1));
  const lse = ctx.empty([M]);
  if (M > 0) ctx.run("ce_rows", ctx.rows(M), [V, logits, targets, loss, lse]);
  record(ctx, "ceRows", [logits], [loss], ([g]) => {
    const gx = ctx.empty(logits.shape);
    if (M > 0) ctx.run("ce_rows_bwd", ctx.rows(M), [V, g!, logits, targets, lse, gx, 0]);
    return [gx];
  });
  return loss;
}

/** Σ x over the counted targets / their count N: [1] (NaN, and zero gradient, when N = 0). */
export function maskedMean(ctx: CudaContext, x: CudaTensor, targets: CudaTensor): CudaTensor {
  expect(
    targets.dtype === "i32" && targets.size === x.size,
    `maskedMean: ${x.size} values [${x.shape}] for ${targets.size} ${targets.dtype} targets [${targets.shape}]`,
  );
  const M = x.size;
  const out = ctx.empty([1]);
  const count = ctx.empty([1]);
  ctx.run("masked_mean", ctx.rows(1), [M, targets, x, out, count]);
  record(ctx, "maskedMean", [x], [out], ([g]) => {
    const gx = ctx.empty(x.shape);
    if (M > 0) ctx.run("masked_mean_bwd", ctx.elems(M), [M, targets, g!, count, gx]);
    return [gx];
  });
  return out;
}
