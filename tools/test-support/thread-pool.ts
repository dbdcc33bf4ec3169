/**
 * Thread-pool suites: a pool started before a suite's tests and stopped after them, and a spy
 * on its workers, since such tests must show that workers took part, not only that the results
 * match. The pool functions are @loop/tensor's, passed in (`{ ...tensorKernel, ...tensorNode }`
 * of `@loop/tensor/kernel` and `@loop/tensor/node`): this package depends on no workspace
 * package (README.md).
 */
import { afterAll, beforeAll, expect } from "vitest";

interface PoolWorker {
  postMessage(msg: { kernel: string }): void;
}

interface Pool {
  workers: readonly PoolWorker[];
}

/** @loop/tensor's pool controls (currentPool, installPool of ./kernel; start/stop of ./node). */
export interface PoolControls<P extends Pool> {
  currentPool(): P | null;
  installPool(p: P | null): P | null;
  startThreadPool(threads?: number): Promise<number>;
  stopThreadPool(): Promise<void>;
}

/**
 * Add the kernel name of every job posted to the running pool's workers to `posted` (the real
 * workers still run the jobs).
 */
export function spyOnWorkers<P extends Pool>(pools: PoolControls<P>, posted: Set<string>): void {
  const pool = pools.currentPool();
  if (!pool) throw new Error("spyOnWorkers: no thread pool is running");
  pools.installPool({
    ...pool,
    workers: pool.workers.map((w) => ({
      postMessage(msg: { kernel: string }) {
        posted.add(msg.kernel);
        w.postMessage(msg);
      },
    })),
  } as P);
}

/**
 * Run the enclosing suite on a pool of `threads` threads (several even on a two-core machine,
 * so that several workers take part), started before its tests and stopped after them; with
 * `posted`, the workers also note their jobs' kernel names there (spyOnWorkers).
 */
export function useThreadPool<P extends Pool>(
  pools: PoolControls<P>,
  threads: number,
  posted?: Set<string>,
): void {
  beforeAll(async () => {
    expect(await pools.startThreadPool(threads)).toBe(threads);
    if (posted) spyOnWorkers(pools, posted);
  });
  afterAll(async () => {
    await pools.stopThreadPool();
  });
}
