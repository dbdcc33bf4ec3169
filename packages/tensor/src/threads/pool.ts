/*
 * Synchronous parallel-for over a pool of worker threads (browser-safe: no `node:` imports).
 *
 * `parallelFor(kernel, n, args)` splits [0, n) into one contiguous part per participating
 * thread, posts parts 1.. to the workers (postMessage: the typed arrays in `args` must live in
 * SharedArrayBuffers, which structured clone shares without copying), runs part 0 on the
 * calling thread, then blocks in `Atomics.wait` on the pool's control block until every
 * worker has bumped its DONE word. From the caller's point of view it is an ordinary
 * synchronous call. It runs the whole range on the calling thread instead when no pool is
 * installed, when called from inside a running job, when the range is too small, or when an
 * argument is a typed array on ordinary (non-shared) memory.
 *
 * Hosts install a pool with `installPool` (see node/threads.ts for Node's worker_threads).
 */
import { CONTROL_BYTES, DONE, ERR, ERR_LEN, ERR_TEXT, type JobMessage } from "./protocol.js";
import type { KernelArgs, ParallelKernel } from "./registry.js";

/** What the pool needs from a worker: Node `Worker` and DOM `Worker` both fit. */
export interface WorkerPort {
  postMessage(msg: JobMessage): void;
}

/** A started thread pool: its thread count, workers and shared control block. */
export interface ThreadPool {
  /** Threads taking part in a job: the workers plus the calling thread. */
  readonly threads: number;
  readonly workers: readonly WorkerPort[];
  /** The control block the workers were started with (see protocol.ts). */
  readonly control: SharedArrayBuffer;
}

/**
 * How `parallelFor` splits its range: part granularity, the smallest part worth a thread, and a
 * thread cap.
 */
export interface ParallelForOptions {
  /** Part boundaries are multiples of this (e.g. a kernel's row tile); default 1. */
  grain?: number;
  /** Smallest part worth a thread: fewer items per thread run serially; default 1. */
  minPerThread?: number;
  /** Use at most this many threads. */
  maxThreads?: number;
}

let pool: ThreadPool | null = null;
let busy = false;
/** At most this many of the pool's threads take part (setThreadLimit). */
let limit = Number.POSITIVE_INFINITY;

/** Install (or, with null, remove) the pool used by parallelFor. Returns the previous one. */
export function installPool(p: ThreadPool | null): ThreadPool | null {
  const prev = pool;
  pool = p;
  return prev;
}

/** The thread pool started in this process, or null (kernels then run on the calling thread). */
export function currentPool(): ThreadPool | null {
  return pool;
}

/** Threads a parallelFor (and a native kernel's OpenMP team) would use right now (1 without a pool). */
export function threadCount(): number {
  return pool === null ? 1 : Math.min(pool.threads, limit);
}

/**
 * Use at most `n` of the pool's threads from now on (null: all of them), without stopping any
 * worker: how the thread governor (governor.ts) switches between thread counts from one step to
 * the next. Results do not depend on it: every kernel splits its work so that any thread count
 * gives the same bits.
 */
export function setThreadLimit(n: number | null): void {
  if (n !== null && (!Number.isInteger(n) || n < 1))
    throw new Error(`setThreadLimit: n must be an integer ≥ 1 or null, got ${n}`);
  limit = n ?? Number.POSITIVE_INFINITY;
}

function isShareable(v: unknown): boolean {
  if (ArrayBuffer.isView(v)) {
    return typeof SharedArrayBuffer !== "undefined" && v.buffer instanceof SharedArrayBuffer;
  }
  return true;
}

/** True when every typed array among the argument values lives in shared memory. */
export function argsShareable(args: KernelArgs): boolean {
  for (const v of Object.values(args)) {
    if (Array.isArray(v)) {
      for (const x of v) if (!isShareable(x)) return false;
    } else if (!isShareable(v)) return false;
  }
  return true;
}

let canBlock: boolean | undefined;

/** Block until ctl[DONE] ≥ target: Atomics.wait where allowed, else spin (browser main thread). */
function waitDone(ctl: Int32Array, target: number): void {
  for (;;) {
    const v = Atomics.load(ctl, DONE);
    if (v >= target) return;
    if (canBlock !== false) {
      try {
        Atomics.wait(ctl, DONE, v);
        canBlock = true;
      } catch {
        canBlock = false;
      }
    }
  }
}

/** Run `kernel.fn(args, lo, hi)` over [0, n), split across the pool's threads. */
export function parallelFor<A extends KernelArgs>(
  kernel: ParallelKernel<A>,
  n: number,
  args: A,
  opts: ParallelForOptions = {},
): void {
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`parallelFor(${kernel.name}): n must be a non-negative integer, got ${n}`);
  }
  const grain = Math.max(1, opts.grain ?? 1);
  const minPer = Math.max(1, opts.minPerThread ?? 1);
  const p = pool;
  let parts = p === null || busy ? 1 : Math.min(threadCount(), opts.maxThreads ?? p.threads);
  parts = Math.min(parts, Math.floor(n / minPer), Math.ceil(n / grain));
  if (parts <= 1 || p === null || !argsShareable(args)) {
    if (n > 0) kernel.fn(args, 0, n);
    return;
  }
  // boundaries at multiples of grain, as even as that allows
  const units = Math.ceil(n / grain);
  const bound = (i: number): number => Math.min(n, Math.round((units * i) / parts) * grain);
  const ctl = new Int32Array(p.control);
  Atomics.store(ctl, DONE, 0);
  Atomics.store(ctl, ERR, 0);
  busy = true;
  let posted = 0;
  try {
    for (let w = 1; w < parts; w++) {
      const lo = bound(w);
      const hi = bound(w + 1);
      if (hi <= lo) continue;
      p.workers[w - 1]!.postMessage({
        type: "job",
        kernel: kernel.name,
        url: kernel.url,
        lo,
        hi,
        args,
      });
      posted++;
    }
    const hi0 = bound(1);
    if (hi0 > 0) kernel.fn(args, 0, hi0);
  } finally {
    // even when the local part threw: workers must finish before the buffers are reused
    waitDone(ctl, posted);
    busy = false;
  }
  if (Atomics.load(ctl, ERR) !== 0) {
    const len = Atomics.load(ctl, ERR_LEN);
    const bytes = new Uint8Array(p.control, ERR_TEXT, CONTROL_BYTES - ERR_TEXT).slice(0, len);
    throw new Error(
      `parallelFor(${kernel.name}): a worker failed: ${new TextDecoder().decode(bytes)}`,
    );
  }
}
