import { describe, expect, it } from "vitest";
import { CachingAllocator, sizeClass } from "./caching-allocator.js";
import { recordingDevice } from "./recording-device.js";

describe("CachingAllocator", () => {
  it("rounds small requests to 512 bytes and large ones to 2 MiB", () => {
    expect(sizeClass(1)).toBe(512);
    expect(sizeClass(513)).toBe(1024);
    expect(sizeClass(1 << 20)).toBe(1 << 20);
    expect(sizeClass((1 << 20) + 1)).toBe(2 << 20);
    expect(sizeClass((5 << 20) + 3)).toBe(6 << 20);
  });

  it("serves a repeated pattern of requests from its cache: nothing new after the first round", () => {
    const dev = recordingDevice();
    const a = new CachingAllocator(dev);
    const sizes = [4096, 100, 3 << 20, 4096, 77, 1 << 20];
    const round = () => {
      const ptrs = sizes.map((s) => a.alloc(s));
      expect(new Set(ptrs).size).toBe(ptrs.length); // live blocks are distinct
      for (const p of ptrs) a.release(p);
    };
    round();
    const first = dev.allocs;
    expect(first).toBe(sizes.length);
    for (let i = 0; i < 5; i++) round();
    expect(dev.allocs).toBe(first);
    expect(a.counters()).toMatchObject({ deviceAllocs: first, usedBytes: 0 });
    a.trim();
    expect(dev.liveBytes).toBe(0);
    expect(a.counters().heldBytes).toBe(0);
  });

  it("gives a persistent request a new block, leaving the cached ones to transients", () => {
    const dev = recordingDevice();
    const a = new CachingAllocator(dev);
    a.release(a.alloc(4096));
    a.alloc(4096, true);
    expect(dev.allocs).toBe(2);
    a.alloc(4096);
    expect(dev.allocs).toBe(2);
  });

  it("gives every block back on releaseAll, in use or cached, and hands out nothing after", () => {
    const dev = recordingDevice();
    const a = new CachingAllocator(dev);
    const kept = a.alloc(3 << 20, true);
    a.release(a.alloc(4096));
    a.alloc(100);
    expect(dev.liveBytes).toBeGreaterThan(0);
    a.releaseAll();
    expect(dev.liveBytes).toBe(0);
    expect(a.counters()).toMatchObject({ heldBytes: 0, usedBytes: 0 });
    a.release(kept); // a tensor released after its context: nothing left to give back
    expect(() => a.alloc(10)).toThrow("its context was released");
  });

  it("takes a cached large block up to twice the size asked, never a small one for a small request", () => {
    const dev = recordingDevice();
    const a = new CachingAllocator(dev);
    a.release(a.alloc(6 << 20));
    a.release(a.alloc(4096));
    a.alloc(4 << 20); // the 6 MiB block serves it
    expect(dev.allocs).toBe(2);
    a.alloc(2 << 20); // nothing cached within 2× of 2 MiB
    expect(dev.allocs).toBe(3);
    a.alloc(1024); // the cached 4096 block is not taken for a small request of another class
    expect(dev.allocs).toBe(4);
  });

  it("counts the peak in use, and on a full device gives its cache back and tries again", () => {
    const dev = recordingDevice("small", 8 << 20);
    const a = new CachingAllocator(dev);
    const first = a.alloc(2 << 20);
    a.release(a.alloc(6 << 20));
    expect(a.counters()).toMatchObject({ heldBytes: 8 << 20, usedBytes: 2 << 20 });
    expect(a.counters().peakUsedBytes).toBe(8 << 20);
    // 8 MiB held: a new 4 MiB block is refused until the cached 6 MiB block goes back
    a.alloc(4 << 20, true);
    expect(a.counters().heldBytes).toBe(6 << 20);
    expect(dev.liveBytes).toBe(6 << 20);
    a.release(first);
    // nothing but the cached 2 MiB block to give back: the device's refusal is the caller's
    expect(() => a.alloc(6 << 20, true)).toThrow("out of memory");
    expect(a.counters().peakUsedBytes).toBe(8 << 20);
  });

  it("refuses to release a block it did not hand out", () => {
    const a = new CachingAllocator(recordingDevice());
    const p = a.alloc(10);
    a.release(p);
    expect(() => a.release(p)).toThrow("is not an allocated block");
  });
});
