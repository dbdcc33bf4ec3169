export { loadCheckpoint, saveCheckpoint } from "./checkpoint-files.js";
export {
  disableNativeKernels,
  enableNativeKernels,
  type NativeReport,
} from "./native-kernels.js";
