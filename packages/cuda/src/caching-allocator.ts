/*
 * A caching allocator over a device's memory: a freed block goes to a free list of its size
 * class and the next request of that class takes it back, so a training step — which asks for
 * the same sizes in the same order every time — allocates nothing on the device after the
 * first. A long-lived block (a parameter, a gradient, an optimiser moment: `persistent`) is
 * always a new one, never taken from the cache, where it would starve the next step's
 * transients of a block they had in the previous step. Size classes: multiples of 512 bytes up to 1 MiB, then multiples of 2 MiB (a request
 * wastes at most 512 bytes, or 2 MiB on a large tensor). Blocks are reused in stream order (one
 * stream: a block freed after the kernels that read it is reused only by later kernels), so no
 * synchronisation is needed. `trim()` returns the cached blocks to the device.
 */
import type { CudaDevice } from "./device.js";

const SMALL = 512;
const LARGE = 2 << 20;
const SMALL_LIMIT = 1 << 20;

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
}

/** See the file comment. */
export class CachingAllocator {
  private readonly free = new Map<number, number[]>();
  private readonly sizes = new Map<number, number>();
  private stats: AllocatorStats = { deviceAllocs: 0, heldBytes: 0, usedBytes: 0 };
  /** Set by releaseAll: the blocks went back to the device, nothing more is handed out. */
  private closed = false;

  constructor(private readonly device: Pick<CudaDevice, "alloc" | "free">) {}

  /** A block of at least `bytes` bytes: a cached one of its class (unless persistent), else a new one. */
  alloc(bytes: number, persistent = false): number {
    if (this.closed) throw new Error("cuda allocator: its context was released");
    const size = sizeClass(bytes);
    let ptr = persistent ? undefined : this.free.get(size)?.pop();
    if (ptr === undefined) {
      ptr = this.device.alloc(size);
      this.stats.deviceAllocs++;
      this.stats.heldBytes += size;
    }
    this.sizes.set(ptr, size);
    this.stats.usedBytes += size;
    return ptr;
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
