/*
 * @loop/cuda/node: starting a CUDA device in Node (the driver addon built on first use, the
 * kernels compiled on first use) and the build tools the tests use.
 */
export {
  ADDON_SOURCE,
  buildDriverAddon,
  checkDriverPrototypes,
  type DriverAddon,
} from "./build-addon.js";
export {
  compileWithNvcc,
  KERNEL_DIR,
  type KernelCompiler,
  kernelImage,
  kernelUnit,
  type PtxasEntry,
  ptxasReport,
} from "./compile-kernels.js";
export { startEmulatedDevice } from "./emulated-device.js";
export {
  cublasLtCandidates,
  cudaIncludeDir,
  driverLibrary,
  findNvcc,
  nvrtcCandidates,
} from "./find-cuda.js";
export { type CudaDeviceInfo, type StartCudaOptions, startCudaDevice } from "./start-device.js";
