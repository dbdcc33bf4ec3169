/**
 * The model worker's WebGPU device: opened on the first request and kept for the page's life
 * (a device costs a moment to make, and the pool of buffers on it is reused by every run).
 */
import { type GpuContext, requestGpuContext } from "@loop/webgpu";

let device: Promise<GpuContext> | null = null;

/** The device, or a rejection with one sentence saying why there is none. */
export function gpuContext(): Promise<GpuContext> {
  if (device === null) {
    const gpu = (navigator as WorkerNavigator & { gpu?: GPU }).gpu;
    device = requestGpuContext(gpu, {
      hint: gpu
        ? "on Linux, Chromium offers an adapter with --enable-unsafe-webgpu or chrome://flags/#enable-unsafe-webgpu"
        : "this browser does not offer WebGPU to workers, or has it switched off",
    });
    // a failed attempt is not kept: the next request tries again
    device.catch(() => {
      device = null;
    });
  }
  return device;
}

/** The adapter's name, or null and the reason. */
export async function probeGpu(): Promise<{ adapter: string | null; reason: string | null }> {
  try {
    return { adapter: (await gpuContext()).adapterName, reason: null };
  } catch (e) {
    return { adapter: null, reason: e instanceof Error ? e.message : String(e) };
  }
}
