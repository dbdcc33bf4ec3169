/*
 * A caching allocator over a device's memory: a freed block goes to a free list of its size
 * class and the next request of that class takes it back, so a training step — which asks for
 * the same sizes in the same order every time — allocates nothing on the device after the
 * first. A long-lived block (a parameter, a gradient, an optimiser moment: `persistent`) is
 * always a new one, never taken from the cache, where it would starve the next step's
 * transients of a block they had in the previous step. Size classes: multiples of 512 bytes up to 1 MiB, then multiples of 2 MiB (a request
 * wastes at most 512 bytes, or 2 MiB on a large tensor). Blocks are reused in stream order (one
 * stream: a block freed after the kernels that read it is reused only by later kernels), so no
 * synchronisation is needed. `trim()` returns the cached blocks to the device, and a request
 * the device refuses is tried once more after it (PyTorch's allocator frees its cache on an
 * out-of-memory the same way): what a step needs of the device is therefore its peak of bytes
 * in use (`peakUsedBytes`), not what the cache happens to hold.
 */
import type { CudaDevice } from "./device.js";

const SMALL = 512;
const LARGE = 2 << 20;
const SMALL_LIMIT = 1 << 20;
/** How much bigger than asked a cached large block may be and still be taken (see cachedFit). */
const LARGE_FIT = 2;

/** The bytes a request of `bytes` is served with. */
export function sizeClass(bytes: number): number {
  const b = Math.max(bytes, 1);
  return b <= SMALL_LIMIT ? Math.ceil(b / SMALL) * SMALL : Math.ceil(b / LARGE) * LARGE;
}

/** Counters of an allocator: what it asked of the device and what it holds. */
export interface AllocatorStats {
  /** Device allocations made so far. */
  deviceAllocs: number;
  /** Bytes held from the device (in use and cached). */
  heldBytes: number;
  /** Bytes in use by tensors. */
  usedBytes: number;
  /** The most bytes in use at once so far: what the work needs of the device. */
  peakUsedBytes: number;
}

/** See the file comment. */
export class CachingAllocator {
  private readonly free = new Map<number, number[]>();
  private readonly sizes = new Map<number, number>();
  private stats: AllocatorStats = { deviceAllocs: 0, heldBytes: 0, usedBytes: 0, peakUsedBytes: 0 };
  /** Set by releaseAll: the blocks went back to the device, nothing more is handed out. */
  private closed = false;

  constructor(private readonly device: Pick<CudaDevice, "alloc" | "free">) {}

  /** A block of at least `bytes` bytes: a cached one of its class (unless persistent), else a new one. */
  alloc(bytes: number, persistent = false): number {
    if (this.closed) throw new Error("cuda allocator: its context was released");
    let size = sizeClass(bytes);
    let ptr: number | undefined;
    if (!persistent) {
      const fit = this.cachedFit(size);
      if (fit !== undefined) {
        size = fit;
        ptr = this.free.get(fit)!.pop();
      }
    }
    if (ptr === undefined) {
      ptr = this.fromDevice(size);
      this.stats.deviceAllocs++;
      this.stats.heldBytes += size;
    }
    this.sizes.set(ptr, size);
    this.stats.usedBytes += size;
    this.stats.peakUsedBytes = Math.max(this.stats.peakUsedBytes, this.stats.usedBytes);
    return ptr;
  }

  /** A new device block; when the device refuses, once more after the cache went back to it. */
  private fromDevice(size: number): number {
    try {
      return this.device.alloc(size);
    } catch (e) {
      if (![...this.free.values()].some((l) => l.length > 0)) throw e;
      this.trim();
      return this.device.alloc(size);
    }
  }

  /**
   * The class of the cached block a request of class `size` takes: its own, or for a large
   * request the smallest cached class up to LARGE_FIT times as big (a step's shapes differ by
   * layer kind, so an exact match alone leaves blocks of one shape idle while another shape asks
   * the device for more). Undefined when none is cached.
   */
  private cachedFit(size: number): number | undefined {
    if (this.free.get(size)?.length) return size;
    if (size <= SMALL_LIMIT) return undefined;
    let best: number | undefined;
    for (const [s, list] of this.free)
      if (list.length && s > size && s <= size * LARGE_FIT && (best === undefined || s < best))
        best = s;
    return best;
  }

  /** Give `ptr` back to its class's free list. */
  release(ptr: number): void {
    if (this.closed) return; // releaseAll gave every block back already
    const size = this.sizes.get(ptr);
    if (size === undefined) throw new Error(`cuda allocator: ${ptr} is not an allocated block`);
    this.sizes.delete(ptr);
    this.stats.usedBytes -= size;
    let list = this.free.get(size);
    if (!list) {
      list = [];
      this.free.set(size, list);
    }
    list.push(ptr);
  }

  /** Return every block to the device, in use or cached (the context that owns it is done). */
  releaseAll(): void {
    this.trim();
    for (const [ptr, size] of this.sizes) {
      this.device.free(ptr);
      this.stats.heldBytes -= size;
      this.stats.usedBytes -= size;
    }
    this.sizes.clear();
    this.closed = true;
  }

  /** Return every cached (unused) block to the device. */
  trim(): void {
    for (const [size, list] of this.free) {
      for (const ptr of list) this.device.free(ptr);
      this.stats.heldBytes -= size * list.length;
    }
    this.free.clear();
  }

  /** The counters now (a copy). */
  counters(): AllocatorStats {
    return { ...this.stats };
  }
}
