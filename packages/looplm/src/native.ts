// The one call that switches every package's native kernels on or off lives in
// @loop/looped/node (the lowest package that reaches all three kernel groups); the umbrella
// re-exports it.
export { disableNativeKernels, enableNativeKernels, type NativeReport } from "@loop/looped/node";
