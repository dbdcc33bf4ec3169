/**
 * `@loop/webgpu/kernel`: for authors of WGSL kernels and ops — the kernel definition helpers and
 * the tape's recording primitive.
 */

export { emptyLike } from "./gpu-tensor.js";
export {
  defineKernel,
  flatIndex,
  grid,
  groups,
  type Kernel,
  type KernelSpec,
} from "./kernel-def.js";
export {
  addInto,
  addTensors,
  axpby,
  copyTensor,
  fillInPlace,
  fillTensor,
} from "./ops/elementwise.js";
export { isGpuGradEnabled, recordGpu } from "./tape.js";
