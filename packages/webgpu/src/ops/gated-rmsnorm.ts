/**
 * `gatedRmsnorm` on GPU tensors: the twin of @loop/ssm-kernels' op (same arguments, shapes and
 * gradients; kernels/gated-rmsnorm.ts).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import {
  gatedRmsnormBackwardKernel,
  gatedRmsnormGradWeight,
  gatedRmsnormKernel,
} from "../kernels/gated-rmsnorm.js";
import { gradTarget, recordGpu } from "../tape.js";
import { columnSum } from "./column-sum.js";
import { shapeStr } from "./shape-str.js";

/** y = rmsnorm_grouped(x ⊙ silu(z)) ⊙ weight, for x, z [..., Di], weight [Di], G | Di. */
export function gatedRmsnorm(
  x: GpuTensor,
  z: GpuTensor,
  weight: GpuTensor,
  nGroups = 1,
  eps = 1e-5,
): GpuTensor {
  const Di = x.lastDim;
  if (shapeStr(x.shape) !== shapeStr(z.shape))
    throw new Error(
      `webgpu gatedRmsnorm: z must have the shape of x ${shapeStr(x.shape)}, got ${shapeStr(z.shape)}`,
    );
  if (weight.rank !== 1 || weight.size !== Di)
    throw new Error(`webgpu gatedRmsnorm: weight must be [${Di}], got ${shapeStr(weight.shape)}`);
  if (!Number.isInteger(nGroups) || nGroups < 1 || Di % nGroups !== 0)
    throw new Error(
      `webgpu gatedRmsnorm: nGroups must be a positive divisor of the channel count ${Di}, got ${nGroups}`,
    );
  const ctx = x.ctx;
  const rows = x.rows;
  const G = nGroups;
  const y = emptyLike(ctx, x.shape);
  const rinv = emptyLike(ctx, [rows * G]);
  const inputs = { x: x.buffer, z: z.buffer, weight: weight.buffer };
  ctx.run(
    gatedRmsnormKernel,
    { ...inputs, y: y.buffer, rinv: rinv.buffer },
    { rows, Di, G, eps },
    grid(rows * G, 1),
  );
  recordGpu("gatedRmsnorm", [x, z, weight], [y], ([g]) => {
    const gx = emptyLike(ctx, x.shape);
    const gz = emptyLike(ctx, x.shape);
    ctx.run(
      gatedRmsnormBackwardKernel,
      { ...inputs, rinv: rinv.buffer, gy: g!.buffer, gx: gx.buffer, gz: gz.buffer },
      { rows, Di, G },
      grid(rows * G, 1),
    );
    const gw = weight.requiresGrad
      ? columnSum(
          ctx,
          gatedRmsnormGradWeight,
          { x: x.buffer, z: z.buffer, rinv: rinv.buffer, gy: g!.buffer },
          { G },
          rows,
          Di,
          [Di],
          gradTarget(weight),
        )
      : null;
    return [gx, gz, gw];
  });
  return y;
}
