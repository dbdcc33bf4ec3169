/*
 * `gatedRmsnorm` on GPU tensors: the twin of @loop/ssm-kernels' op (same arguments, shapes and
 * gradients; kernels/gated-rmsnorm.ts).
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { gatedRmsnormBackwardKernel, gatedRmsnormKernel } from "../kernels/gated-rmsnorm.js";
import { gradTarget, recordGpu } from "../tape.js";
import { columnRoleParams, columnSumFinish, columnSumStart } from "./column-sum.js";
import { placeholder } from "./optional-inputs.js";
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
  ctx.run(gatedRmsnormKernel, { ...inputs, y, rinv }, { rows, Di, G, eps }, grid(rows * G, 1));
  recordGpu(
    "gatedRmsnorm",
    [x, z, weight],
    [y],
    ([g]) => {
      // x and z: both or neither need a gradient in the model; the kernel writes both
      const wantXZ = x.requiresGrad || z.requiresGrad;
      const gx = wantXZ ? emptyLike(ctx, x.shape) : null;
      const gz = wantXZ ? emptyLike(ctx, x.shape) : null;
      // ∂weight's column sum starts in the backward's dispatch, into weight's gradient
      const cs = weight.requiresGrad
        ? columnSumStart(ctx, rows, Di, [Di], gradTarget(weight))
        : null;
      const items = wantXZ ? rows * G : 0;
      const spare = placeholder(ctx);
      ctx.run(
        gatedRmsnormBackwardKernel,
        {
          ...inputs,
          rinv,
          gy: g!.buffer,
          gx: gx ?? spare,
          gz: gz ?? emptyLike(ctx, [1]).buffer,
          partial: cs?.partial ?? spare,
        },
        { rows: wantXZ ? rows : 0, Di, G, ...columnRoleParams(cs, "", Di), colJobs: cs?.jobs ?? 0 },
        grid(items + (cs?.jobs ?? 0), 1),
      );
      return [
        x.requiresGrad ? gx : null,
        z.requiresGrad ? gz : null,
        cs ? columnSumFinish(cs) : null,
      ];
      // its output is not read (a projection under mixed precision may let it go: tape.ts)
    },
    [x, z, weight],
  );
  return y;
}
