/*
 * Memory that worker threads can use. Workers see only SharedArrayBuffer memory, and
 * `parallelFor` runs serially when any typed-array argument is not shared, so a kernel that
 * hands buffers to the pool stages them here. Without a running pool (or on a platform without
 * SharedArrayBuffer) nothing is copied or forced into shared memory.
 */
import { allocF32, allocF32Uninit } from "./tensor.js";
import { threadCount } from "./threads/pool.js";

const canShare = typeof SharedArrayBuffer !== "undefined";

function poolNeedsShared(): boolean {
  return canShare && threadCount() > 1;
}

/**
 * `allocF32(n)` (or `allocF32Uninit(n)` with `zero` false), in shared memory whenever a pool
 * runs: `allocF32` shares only from 1024 floats up. Inside a `withScratch` scope it is a pooled
 * step buffer: only for memory that dies with the op or the step, never for caches kept longer.
 */
export function allocShared(n: number, zero = true): Float32Array {
  const a = zero ? allocF32(n) : allocF32Uninit(n);
  if (!poolNeedsShared() || a.buffer instanceof SharedArrayBuffer) return a;
  return new Float32Array(new SharedArrayBuffer(4 * n));
}

/** A zeroed Float64Array, shared whenever a pool runs (never pooled). */
export function allocShared64(n: number): Float64Array {
  return poolNeedsShared() ? new Float64Array(new SharedArrayBuffer(8 * n)) : new Float64Array(n);
}

/** `a` itself, or a shared copy of it when a pool runs and `a` is not shared. */
export function shareable<A extends Float32Array | Float64Array | Int32Array>(a: A): A {
  if (!poolNeedsShared() || a.buffer instanceof SharedArrayBuffer) return a;
  if (a instanceof Float32Array) {
    const c = allocShared(a.length, false);
    c.set(a);
    return c as A;
  }
  const c = (
    a instanceof Float64Array
      ? new Float64Array(new SharedArrayBuffer(8 * a.length))
      : new Int32Array(new SharedArrayBuffer(4 * a.length))
  ) as A;
  c.set(a);
  return c;
}
