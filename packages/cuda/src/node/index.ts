/*
 * @loop/cuda/node: starting a CUDA device in Node (the driver addon and the kernels prebuilt
 * where this package or the offline bundle carries them, else built on first use) and the build
 * tools the tests and `pnpm bundle` use.
 */
export {
  ADDON_SOURCE,
  type AddonLaunch,
  type AddonOrigin,
  buildDriverAddon,
  checkDriverPrototypes,
  compileAddon,
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
export { type FatbinContents, fatbinContents, fatbinCovers } from "./fatbin.js";
export {
  cublasLtCandidates,
  cudaIncludeDir,
  DRIVER_DIRS,
  driverCandidates,
  findNvcc,
  nvrtcCandidates,
  sitePackages,
} from "./find-cuda.js";
export {
  PREBUILT_PTX,
  PREBUILT_SASS,
  type PrebuiltManifest,
  prebuiltDir,
  prebuiltKernels,
} from "./prebuilt.js";
export {
  type CudaDeviceInfo,
  type CudaLibrary,
  driverDevice,
  type StartCudaOptions,
  startCudaDevice,
} from "./start-device.js";
export { type PrebuildOptions, writePrebuilt } from "./write-prebuilt.js";
