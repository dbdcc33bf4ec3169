/**
 * Thread-pool suites: a pool started before a suite's tests and stopped after them, and a spy
 * on its workers, since such tests must show that workers took part, not only that the results
 * match.
 */
import { currentPool, installPool } from "@loop/tensor/kernel";
import { startThreadPool, stopThreadPool } from "@loop/tensor/node";
import { afterAll, beforeAll, expect } from "vitest";

/**
 * Add the kernel name of every job posted to the running pool's workers to `posted` (the real
 * workers still run the jobs).
 */
export function spyOnWorkers(posted: Set<string>): void {
  const pool = currentPool();
  if (!pool) throw new Error("spyOnWorkers: no thread pool is running");
  installPool({
    ...pool,
    workers: pool.workers.map((w) => ({
      postMessage(msg) {
        posted.add(msg.kernel);
        w.postMessage(msg);
      },
    })),
  });
}

/**
 * Run the enclosing suite on a pool of `threads` threads (several even on a two-core machine,
 * so that several workers take part), started before its tests and stopped after them; with
 * `posted`, the workers also note their jobs' kernel names there (spyOnWorkers).
 */
export function useThreadPool(threads: number, posted?: Set<string>): void {
  beforeAll(async () => {
    expect(await startThreadPool(threads)).toBe(threads);
    if (posted) spyOnWorkers(posted);
  });
  afterAll(async () => {
    await stopThreadPool();
  });
}
