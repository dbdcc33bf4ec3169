export {
  checkWritableFile,
  readJsonFile,
  readSafetensorsFile,
  writeFileAtomic,
  writeSafetensorsFile,
} from "./files.js";
export {
  type FmaPeak,
  type FmaPeakOptions,
  measureFmaPeak,
  nativeVectorIsa,
} from "./fma-peak.js";
export { errnoCode, fsError, fsErrorMessage } from "./fs-errors.js";
export {
  inputFileExists,
  inputFileStats,
  type ReadInputOptions,
  readInputFile,
  readInputText,
} from "./input-file.js";
export {
  type KernelProfileEntry,
  startKernelProfile,
  stopKernelProfile,
} from "./kernel-profile.js";
export {
  disableNativeTensorKernels,
  enableNativeAddons,
  enableNativeTensorKernels,
  type NativeAddonSpec,
  type NativeAddonsResult,
  type TensorAddon,
  tensorNativeSource,
} from "./native.js";
export {
  type AddonResult,
  buildNativeAddon,
  nativeArchFlag,
  nativeDisabled,
  nativeIncludeDir,
  nodeIncludeDir,
} from "./native-addon.js";
export { makeDirectory, outputKind } from "./output-target.js";
export { startThreadPool, stopThreadPool } from "./threads.js";
