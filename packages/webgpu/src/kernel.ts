/*
 * `@loop/webgpu/kernel`: for authors of WGSL kernels and ops — the kernel definition helpers and
 * the tape's recording primitive.
 */

export { type GemmProbeOptions, type GemmProbeResult, gemmThroughput } from "./gemm-probe.js";
export { emptyLike } from "./gpu-tensor.js";
export {
  defineKernel,
  flatIndex,
  grid,
  groups,
  type Kernel,
  type KernelSpec,
} from "./kernel-def.js";
export { tileDepth } from "./kernels/attention.js";
export { GEMM_TILE, GEMM_TILE_LARGE, type GemmTile } from "./kernels/gemm.js";
export {
  addInto,
  addTensors,
  axpby,
  copyTensor,
  fillInPlace,
  fillTensor,
} from "./ops/elementwise-plain.js";
export { type GemmCall, type GemmOperand, gemm } from "./ops/gemm.js";
export { isGpuGradEnabled, recordGpu } from "./tape.js";
