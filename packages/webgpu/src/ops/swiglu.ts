/*
 * SwiGLU on GPU tensors, as @loop/attention's `swiglu`: gate, up [..., F] (same shape) →
 * silu(gate) ⊙ up; one kernel for the forward, one for both gradients.
 */
import { emptyLike, type GpuTensor } from "../gpu-tensor.js";
import { grid } from "../kernel-def.js";
import { SWIGLU_GROUP, swigluBackwardKernel, swigluForwardKernel } from "../kernels/swiglu.js";
import { recordGpu } from "../tape.js";

/** silu(gate) ⊙ up on the GPU, elementwise; differentiable. */
export function swiglu(gate: GpuTensor, up: GpuTensor): GpuTensor {
  if (gate.shape.length !== up.shape.length || gate.shape.some((d, i) => d !== up.shape[i]))
    throw new Error(
      `webgpu swiglu: gate [${gate.shape.join(",")}] and up [${up.shape.join(",")}] must have the same shape`,
    );
  const ctx = gate.ctx;
  const n = gate.size;
  const y = emptyLike(ctx, gate.shape);
  ctx.run(swigluForwardKernel, { gate, up, y }, { n }, grid(n, SWIGLU_GROUP));
  recordGpu(
    "swiglu",
    [gate, up],
    [y],
    ([gy]) => {
      const dgate = emptyLike(ctx, gate.shape);
      const dup = emptyLike(ctx, up.shape);
      ctx.run(
        swigluBackwardKernel,
        { gate, up, gy: gy!, dgate, dup },
        { n },
        grid(n, SWIGLU_GROUP),
      );
      return [gate.requiresGrad ? dgate : null, up.requiresGrad ? dup : null];
      // its output is not read (a projection under mixed precision may let it go: tape.ts)
    },
    [gate, up],
  );
  return y;
}
