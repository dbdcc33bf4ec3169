/*
 * `softplusBias` and `addDSkip` on GPU tensors: the twins of @loop/ssm-kernels' ops of the same
 * names (same arguments, shapes and gradients; kernels/mamba2-ops.ts).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  addDSkipBackwardKernel,
  addDSkipKernel,
  dSkipGradD,
  MAMBA2_EW_GROUP,
  softplusBiasBackwardGradBias,
  softplusBiasBackwardKernel,
  softplusBiasKernel,
} from "../kernels/mamba2-ops.js";
import { type GradTarget, gradTarget, recordGpu } from "../tape.js";
import { columnSum } from "./column-sum.js";
import { shapeStr } from "./shape-str.js";

/** dt = softplus(raw + bias) with bias [H] broadcast over the leading axes of raw [..., H]. */
export function softplusBias(raw: GpuTensor, bias: GpuTensor): GpuTensor {
  const H = raw.lastDim;
  if (bias.rank !== 1 || bias.size !== H)
    throw new Error(
      `webgpu softplusBias: bias must be [${H}], got ${shapeStr(bias.shape)} (raw ${shapeStr(raw.shape)})`,
    );
  const ctx = raw.ctx;
  const n = raw.size;
  const y = emptyLike(ctx, raw.shape);
  const bufs = { raw: raw.buffer, bias: bias.buffer };
  ctx.run(softplusBiasKernel, { ...bufs, y }, { n, H }, grid(n, MAMBA2_EW_GROUP));
  recordGpu("softplusBias", [raw, bias], [y], ([g]) => {
    const graw = emptyLike(ctx, raw.shape);
    if (bias.requiresGrad) {
      // ∂raw written by the column sum that makes ∂bias: one dispatch (more only past 256 rows)
      const gbias = columnSum(
        ctx,
        softplusBiasBackwardGradBias,
        { ...bufs, g: g!.buffer, graw: graw.buffer },
        {},
        n / Math.max(H, 1),
        H,
        [H],
        gradTarget(bias),
      );
      return [graw, gbias];
    }
    ctx.run(
      softplusBiasBackwardKernel,
      { ...bufs, g: g!, graw },
      { n, H },
      grid(n, MAMBA2_EW_GROUP),
    );
    return [graw, null];
  });
  return y;
}

/** out = y + D[h]·x for y, x [..., H, P] and D [H]. */
export function addDSkip(y: GpuTensor, x: GpuTensor, d: GpuTensor): GpuTensor {
  if (y.rank < 2 || shapeStr(y.shape) !== shapeStr(x.shape))
    throw new Error(
      `webgpu addDSkip: y and x must share a shape [..., H, P], got ${shapeStr(y.shape)} and ${shapeStr(x.shape)}`,
    );
  const H = y.shape[y.rank - 2]!;
  const P = y.lastDim;
  if (d.rank !== 1 || d.size !== H)
    throw new Error(`webgpu addDSkip: D must be [${H}], got ${shapeStr(d.shape)}`);
  const ctx = y.ctx;
  const n = y.size;
  const out = emptyLike(ctx, y.shape);
  ctx.run(addDSkipKernel, { y, x, d, out }, { n, H, P }, grid(n, MAMBA2_EW_GROUP));
  recordGpu("addDSkip", [y, x, d], [out], ([g]) => {
    let gx: GpuTensor | null = null;
    if (x.requiresGrad) {
      gx = emptyLike(ctx, x.shape);
      ctx.run(addDSkipBackwardKernel, { g: g!, d, gx }, { n, H, P }, grid(n, MAMBA2_EW_GROUP));
    }
    const gd = d.requiresGrad ? dSkipGrad(g!, x, H, P, gradTarget(d)) : null;
    return [g!, gx, gd];
  });
  return out;
}

/** ∂D[h] = Σ g ⊙ x over every axis but h, for g, x [..., H, P] (written or added `into`). */
export function dSkipGrad(
  g: GpuTensor,
  x: GpuTensor,
  H: number,
  P: number,
  into?: GradTarget,
): GpuTensor {
  const rows = H * P === 0 ? 0 : x.size / (H * P);
  return columnSum(x.ctx, dSkipGradD, { g: g.buffer, x: x.buffer }, { P }, rows, H, [H], into);
}
