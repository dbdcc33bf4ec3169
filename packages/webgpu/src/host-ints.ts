/*
 * The values an index tensor was uploaded with (`gpuModelOps(ctx).uploadInt`), kept on the host
 * so that an op can check them without reading the device back: the decode kernels' `rows`
 * must be distinct rows of the state, which a kernel cannot report. Tensors made on the device
 * have none; an op then checks their shape alone.
 */
import type { GpuTensor } from "./gpu-tensor.js";

const known = new WeakMap<GpuTensor, Int32Array>();

/** Remember a copy of `values` as what `t` holds; returns `t`. */
export function rememberInts(t: GpuTensor, values: Int32Array): GpuTensor {
  known.set(t, values.slice());
  return t;
}

/** Forget what `t` holds (it is being overwritten). */
export function forgetInts(t: GpuTensor): void {
  known.delete(t);
}

/** The values `t` was uploaded with, or null where they are not known on the host. */
export function knownInts(t: GpuTensor): Int32Array | null {
  return known.get(t) ?? null;
}
