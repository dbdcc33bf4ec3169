/*
 * g ← g·factor for every tensor's gradient, in place: the step engine's unscaling of
 * loss-scaled gradients under mixed precision (factor 1/scale, a power of two, so exact).
 */
import type { GpuTensor } from "../gpu-tensor.js";
import { defineKernel, flatEntry, grid } from "../kernel-def.js";

const GROUP = 256;

const scaleInPlaceKernel = defineKernel({
  name: "grad_scale_in_place",
  params: { n: "u32", factor: "f32" },
  buffers: { g: "rw" },
  body: `${flatEntry(GROUP)}
  g[i] = g[i] * p.factor;
}`,
});

/** Multiply every gradient of `grads` by `factor`, in place on the GPU. */
export function scaleGradients(grads: readonly GpuTensor[], factor: number): void {
  for (const g of grads)
    g.ctx.run(scaleInPlaceKernel, { g }, { n: g.size, factor }, grid(g.size, GROUP));
}
