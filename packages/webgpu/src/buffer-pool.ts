/// <reference types="@webgpu/types" />
/*
 * The context's pool of storage buffers, reused across steps: buffers are made in size classes,
 * handed back on release and handed out again oldest first, and counted (live, peak, in all).
 */
import type { GpuMemory } from "./gpu-counters.js";
import { getOrMake } from "./memo.js";
import { BufferUsage } from "./usage.js";

const STORAGE_USAGE = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;

/** Buffer sizes are rounded up to a size class so that freed buffers fit later requests. */
function sizeClass(bytes: number): number {
  const min = 256;
  if (bytes <= min) return min;
  // Powers of two up to 1 MiB, then multiples of 1 MiB: at most 2× waste for small buffers and
  // little for large ones.
  if (bytes <= 1 << 20) return 2 ** Math.ceil(Math.log2(bytes));
  return Math.ceil(bytes / (1 << 20)) * (1 << 20);
}

export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly sizes = new WeakMap<GPUBuffer, number>();
  /** Creation order of the pool's buffers: each free list is kept sorted by it. */
  private readonly serials = new WeakMap<GPUBuffer, number>();
  private nextSerial = 0;
  /** Bytes currently allocated on the device by the pool (live + free). */
  bytes = 0;
  /** Bytes of the pool's buffers handed out and not released (in size classes). */
  private live = 0;
  private peak = 0;

  constructor(private readonly device: GPUDevice) {}

  memory(): GpuMemory {
    return { liveBytes: this.live, peakBytes: this.peak, poolBytes: this.bytes };
  }

  resetPeak(): void {
    this.peak = this.live;
  }

  private track(bytes: number): void {
    this.live += bytes;
    if (this.live > this.peak) this.peak = this.live;
  }

  /** A storage buffer of at least `bytes` bytes (contents unspecified). */
  alloc(bytes: number): GPUBuffer {
    const size = sizeClass(Math.max(4, bytes));
    const list = this.free.get(size);
    const reused = list?.pop();
    if (reused) {
      this.track(size);
      return reused;
    }
    const max = this.device.limits.maxStorageBufferBindingSize;
    if (size > max)
      throw new Error(
        `webgpu: a buffer of ${bytes} bytes exceeds this device's largest binding (${max} bytes)`,
      );
    const buf = this.device.createBuffer({ size, usage: STORAGE_USAGE });
    this.sizes.set(buf, size);
    this.serials.set(buf, this.nextSerial++);
    this.bytes += size;
    this.track(size);
    return buf;
  }

  /** Take back a buffer from `alloc`. */
  release(buf: GPUBuffer): void {
    const size = this.sizes.get(buf);
    if (size === undefined) throw new Error("webgpu: release of a buffer the pool did not make");
    this.live -= size;
    const list = getOrMake(this.free, size, () => []);
    // Sorted newest first, so that `alloc` pops the oldest free buffer of the size: which
    // buffer an allocation gets depends only on which are free, not on the order they were
    // released in. A step that starts with the same buffers free as the previous one then gets
    // the same buffers in the same places, and finds its bind groups cached.
    const serial = this.serials.get(buf)!;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.serials.get(list[mid]!)! > serial) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, buf);
  }

  /** Destroy the free buffers (live ones stay), calling `onDestroy` with each first. */
  trim(onDestroy: (buf: GPUBuffer) => void): void {
    for (const list of this.free.values())
      for (const b of list) {
        this.bytes -= this.sizes.get(b) ?? 0;
        onDestroy(b);
        b.destroy();
      }
    this.free.clear();
  }
}
