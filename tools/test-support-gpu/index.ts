/**
 * The helpers the WebGPU test suites share: the device of a suite (or a printed skip), GPU ops
 * checked against their CPU oracles, and golden cases on the device. A private package apart
 * from @loop/test-support because it depends on @loop/webgpu, whose own tests use it (the root
 * build and publint leave it out so that the cycle never orders a task).
 */
export { expectGpuGolden, expectGpuGrads, gpuInts, gpuTensors } from "./gpu-golden.js";
export {
  checkAgainstCpu,
  expectClose,
  type OracleCase,
  type OracleInput,
  poisonPool,
  randomData,
  type Tolerance,
  toGpu,
  toGpuInt,
} from "./gpu-oracle.js";
export { gpuForTests } from "./gpu-suite.js";
