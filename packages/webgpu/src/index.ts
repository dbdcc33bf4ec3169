/**
 * `@loop/webgpu`: the WebGPU backend. A `GpuContext` wraps one device; `GpuTensor`s live on it
 * for a whole training step; ops enqueue WGSL kernels and record their gradients on a GPU tape.
 * In a browser pass `navigator.gpu` to `requestGpuContext`; in Node use `@loop/webgpu/node`.
 */
export { GpuContext, type GpuContextOptions, requestGpuContext } from "./gpu-context.js";
export {
  type GpuDtype,
  GpuTensor,
  gpuParameter,
  releaseTransients,
  transientCount,
  uploadTensor,
} from "./gpu-tensor.js";
export { add, scale } from "./ops/elementwise.js";
export { linearSplit } from "./ops/linear-split.js";
export { linear, type MatmulOptions, matmul } from "./ops/matmul.js";
export { rope } from "./ops/rope.js";
export { reshape } from "./ops/shape.js";
export { swiglu } from "./ops/swiglu.js";
export { backwardGpu, gpuNoGrad, zeroGpuGrads } from "./tape.js";
