/**
 * `@loop/test-support`: the helpers the packages' tests share — the golden reference data and its
 * tolerance, the one rule for a suite that cannot run here, the native and WebGPU suite gates.
 * Private and source-only (README.md says why it depends on no package of the workspace).
 */

export { countingGemm } from "./counting-gemm.js";
export { cudaSuiteRuns, emulatorSuiteRuns } from "./cuda-suite.js";
export {
  type CloseReport,
  compareGolden,
  expectGolden,
  type GoldenTensor,
  goldenModelCases,
  goldenPath,
  type KernelCase,
  loadGolden,
  loadKernelCase,
  testdataPath,
} from "./golden.js";
export { type GradLeaf, goldenGrads } from "./golden-grads.js";
export { gpuForTests, gpuSuiteRuns } from "./gpu-suite.js";
export { type KernelProfile, withNativeCalls } from "./native-calls.js";
export {
  goldenKernelSuites,
  type NativeGoldenCase,
  type NativeKernels,
  nativeGoldenCases,
} from "./native-golden.js";
export { itBuildsNativeAddon, nativeBuildExpected, nativeSuiteRuns } from "./native-suite.js";
export { documentSlice } from "./packed-documents.js";
export { relErr } from "./rel-err.js";
export { restoreEnvAfterEach } from "./restore-env.js";
export { suiteRuns } from "./suite-runs.js";
export { type PoolControls, spyOnWorkers, useThreadPool } from "./thread-pool.js";
export { tinyModelConfig } from "./tiny-model.js";
