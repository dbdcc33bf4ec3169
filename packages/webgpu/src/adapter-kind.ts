/**
 * Whether an adapter is a CPU emulation of a GPU (Google's SwiftShader, Mesa's lavapipe /
 * llvmpipe): correct, but slower than the CPU kernels, so callers say so beside any speed.
 */
const EMULATORS = /swiftshader|lavapipe|llvmpipe/i;

/** `name`: the adapter's description, as `GpuContext.adapterName` gives it. */
export function isCpuEmulation(name: string): boolean {
  return EMULATORS.test(name);
}
