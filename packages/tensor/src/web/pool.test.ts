// The browser pool's own behaviour runs in Chromium (packages/playground's browser test); here,
// what Node can check: arguments, and the one-thread fallback outside cross-origin isolation.
import { afterEach, describe, expect, it } from "vitest";
import { threadCount } from "../threads/pool.js";
import { ISOLATION_NOTICE, startWebWorkerPool, stopWebWorkerPool } from "./pool.js";
import { serveWebPoolWorker } from "./pool-worker.js";

const noWorker = (): Worker => {
  throw new Error("no worker should start");
};

afterEach(() => stopWebWorkerPool());

describe("startWebWorkerPool", () => {
  it("rejects a bad thread count", async () => {
    await expect(startWebWorkerPool(0, { createWorker: noWorker })).rejects.toThrow(
      /threads must be a positive integer, got 0/,
    );
  });

  it("runs on one thread with a notice when the page is not cross-origin isolated", async () => {
    expect((globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated).toBeUndefined();
    expect(await startWebWorkerPool(4, { createWorker: noWorker })).toEqual({
      threads: 1,
      notice: ISOLATION_NOTICE,
    });
    expect(threadCount()).toBe(1);
    expect(ISOLATION_NOTICE).not.toMatch(/\n/);
  });

  it("one thread needs no workers and no notice", async () => {
    expect(await startWebWorkerPool(1, { createWorker: noWorker })).toEqual({
      threads: 1,
      notice: null,
    });
  });
});

describe("serveWebPoolWorker", () => {
  it("wants the kernel modules, so that a bundler keeps them", () => {
    expect(() => serveWebPoolWorker([])).toThrow(/pass the imported modules/);
  });
});
