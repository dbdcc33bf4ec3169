/** Shape ops on GPU tensors: views that share the buffer (no kernel runs). */
import { GpuTensor, type Shape } from "../gpu-tensor.js";
import { recordGpu } from "../tape.js";

/** The same values with another shape (a view; the gradient is reshaped back). */
export function reshape(t: GpuTensor, shape: Shape): GpuTensor {
  const out = new GpuTensor(t.ctx, shape, { viewOf: t });
  recordGpu("reshape", [t], [out], ([g]) => [reshape(g!, t.shape)]);
  return out;
}
