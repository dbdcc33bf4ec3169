export {
  type LoadCheckpointOptions,
  loadCheckpoint,
  readModelJson,
  saveCheckpoint,
  saveHfCheckpoint,
} from "./checkpoint-files.js";
export {
  disableNativeKernels,
  enableNativeKernels,
  type NativeReport,
} from "./native-kernels.js";
