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

/** The largest finite float32: the kernels' stand-in for an upper limit of +∞. */
const F32_MAX = 3.4028234663852886e38;

/**
 * dt = clamp(softplus(raw + bias), lo, hi) with bias [H] broadcast over the leading axes of
 * raw [..., H]; `limit` [lo, hi] (the time_step_limit), null for none. ∂raw is zero where the
 * softplus lies outside the limits.
 */
export function softplusBias(
  raw: GpuTensor,
  bias: GpuTensor,
  limit: readonly [number, number] | null = null,
): GpuTensor {
  const H = raw.lastDim;
  if (bias.rank !== 1 || bias.size !== H)
    throw new Error(
      `webgpu softplusBias: bias must be [${H}], got ${shapeStr(bias.shape)} (raw ${shapeStr(raw.shape)})`,
    );
  if (limit && !(limit[0] <= limit[1]))
    throw new Error(
      `webgpu softplusBias: limit must be [lo, hi] with lo ≤ hi, got [${limit.join(", ")}]`,
    );
  // (a softplus is never negative: a lower limit ≤ 0 is the same as 0)
  const lo = limit ? Math.max(0, Math.fround(limit[0])) : 0;
  const hi = limit ? Math.min(F32_MAX, Math.fround(limit[1])) : F32_MAX;
  const ctx = raw.ctx;
  const n = raw.size;
  const y = emptyLike(ctx, raw.shape);
  const bufs = { raw: raw.buffer, bias: bias.buffer };
  ctx.run(softplusBiasKernel, { ...bufs, y }, { n, H, lo, hi }, grid(n, MAMBA2_EW_GROUP));
  recordGpu("softplusBias", [raw, bias], [y], ([g]) => {
    const graw = emptyLike(ctx, raw.shape);
    if (bias.requiresGrad) {
      // ∂raw written by the column sum that makes ∂bias: one dispatch (more only past 256 rows)
      const gbias = columnSum(
        ctx,
        softplusBiasBackwardGradBias,
        { ...bufs, g: g!.buffer, graw: graw.buffer },
        { lo, hi },
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
      { n, H, lo, hi },
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
