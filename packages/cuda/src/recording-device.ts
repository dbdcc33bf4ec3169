/*
 * A `CudaDevice` that runs nothing: it hands out distinct addresses, checks every launch's
 * packed arguments against the kernel table (packArgs already did) and records each launch and
 * allocation; reads resolve to zeros. The backend's ops run on it unchanged, which gives their
 * launch plan (launches per kernel, per layer application) and their allocations on a machine
 * without a GPU.
 */
import type { CudaDevice, Dim3 } from "./device.js";
import type { KernelName } from "./kernel-table.js";

/** One recorded launch. */
export interface RecordedLaunch {
  kernel: KernelName;
  grid: Dim3;
  block: Dim3;
  shared: number;
}

/** A device that records instead of running (see the file comment). */
export interface RecordingDevice extends CudaDevice {
  readonly launches: RecordedLaunch[];
  /** Device allocations so far (the caching allocator's misses). */
  allocs: number;
  /** Bytes allocated and not freed. */
  liveBytes: number;
}

/**
 * A fresh recording device; with `memoryBytes`, an allocation that would take it past that many
 * bytes is refused as cuMemAlloc refuses one on a full GPU.
 */
export function recordingDevice(
  name = "recording device",
  memoryBytes = Number.POSITIVE_INFINITY,
): RecordingDevice {
  let next = 1 << 20;
  const sizes = new Map<number, number>();
  const dev: RecordingDevice = {
    name,
    launches: [],
    allocs: 0,
    liveBytes: 0,
    alloc(bytes) {
      if (dev.liveBytes + bytes > memoryBytes)
        throw new Error("cuMemAlloc: out of memory (CUDA error 2)");
      const ptr = next;
      next += Math.ceil(bytes / 256) * 256 + 256;
      sizes.set(ptr, bytes);
      dev.allocs++;
      dev.liveBytes += bytes;
      return ptr;
    },
    free(ptr) {
      const b = sizes.get(ptr);
      if (b === undefined) throw new Error(`recording device: free of unknown ${ptr}`);
      sizes.delete(ptr);
      dev.liveBytes -= b;
    },
    upload() {},
    zero() {},
    copy() {},
    read: async (_ptr, bytes) => new ArrayBuffer(bytes),
    launch(kernel, grid, block, shared) {
      for (const d of [...grid, ...block])
        if (!(Number.isInteger(d) && d >= 1)) throw new Error(`${kernel}: launch dimension ${d}`);
      if (block[0] * block[1] * block[2] > 1024)
        throw new Error(`${kernel}: block over 1024 threads`);
      dev.launches.push({ kernel, grid, block, shared });
    },
    destroy() {},
  };
  return dev;
}
