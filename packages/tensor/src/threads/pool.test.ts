import { threadId } from "node:worker_threads";
import { useThreadPool } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { gemmMaxError, gemmTolerance } from "../kernels/gemm-check.test-util.js";
import {
  gemmParallel,
  PARALLEL_MIN_MACS,
  setGemmParallelThreshold,
} from "../kernels/gemm-parallel.js";
import { startThreadPool, stopThreadPool } from "../node/threads.js";
import { failKernel, fillKernel } from "../node/threads-fixture.test-util.js";
import { argsShareable, currentPool, installPool, parallelFor, threadCount } from "./pool.js";
import { defineKernel, findKernel } from "./registry.js";

const sharedI32 = (n: number) => new Int32Array(new SharedArrayBuffer(n * 4));

describe("registry", () => {
  it("finds kernels by name and rejects empty names", () => {
    const k = defineKernel("test/registry", import.meta.url, () => undefined);
    expect(findKernel("test/registry")).toBe(k);
    expect(findKernel("test/missing")).toBeUndefined();
    expect(() => defineKernel("", import.meta.url, () => undefined)).toThrow(/name/);
  });
});

describe("parallelFor without a pool", () => {
  it("runs the whole range on the calling thread", () => {
    expect(threadCount()).toBe(1);
    const out = sharedI32(10);
    const owner = sharedI32(10).fill(-1);
    parallelFor(fillKernel, 10, { out, owner });
    expect(Array.from(out)).toEqual(Array.from({ length: 10 }, (_, i) => 2 * i + 1));
    expect(new Set(owner)).toEqual(new Set([threadId]));
  });

  it("rejects a bad range", () => {
    expect(() => parallelFor(fillKernel, -1, { out: sharedI32(1), owner: sharedI32(1) })).toThrow(
      /n must be a non-negative integer, got -1/,
    );
  });
});

describe("thread pool", () => {
  useThreadPool({ currentPool, installPool, startThreadPool, stopThreadPool }, 3);

  it("splits the range across all threads, each index once", () => {
    expect(threadCount()).toBe(3);
    const n = 1001;
    const out = sharedI32(n);
    const owner = sharedI32(n).fill(-1);
    parallelFor(fillKernel, n, { out, owner }, { grain: 4 });
    expect(out.every((v, i) => v === 2 * i + 1)).toBe(true);
    expect(new Set(owner).size).toBe(3);
    // parts are contiguous and start at multiples of the grain
    for (let i = 1; i < n; i++) if (owner[i] !== owner[i - 1]) expect(i % 4).toBe(0);
  });

  it("runs serially when an argument is not in shared memory", () => {
    const args = { out: new Int32Array(100), owner: new Int32Array(100) };
    expect(argsShareable(args)).toBe(false);
    parallelFor(fillKernel, 100, args);
    expect(new Set(args.owner)).toEqual(new Set([threadId]));
    expect(args.out[99]).toBe(199);
  });

  it("runs serially below minPerThread", () => {
    const out = sharedI32(20);
    const owner = sharedI32(20).fill(-1);
    parallelFor(fillKernel, 20, { out, owner }, { minPerThread: 16 });
    expect(new Set(owner)).toEqual(new Set([threadId]));
  });

  it("reports a worker's error on the calling thread, then keeps working", () => {
    expect(() => parallelFor(failKernel, 8, { n: 8 })).toThrow(
      /parallelFor\(test\/fail\): a worker failed: .*fixture failure at/,
    );
    const out = sharedI32(30);
    parallelFor(fillKernel, 30, { out, owner: sharedI32(30) });
    expect(out[29]).toBe(59);
  });

  const gemmCases = [
    { M: 257, N: 96, K: 70, transA: false, transB: false, alpha: 1, beta: 0 }, // row bands
    { M: 130, N: 67, K: 129, transA: true, transB: true, alpha: 0.5, beta: 1.5, pad: 2, off: 3 },
    { M: 8, N: 1030, K: 64, transA: false, transB: true, alpha: 1, beta: 0.5 }, // column bands
    { M: 12, N: 515, K: 90, transA: true, transB: false, alpha: -1, beta: 0, pad: 1, off: 1 },
  ];
  for (const shared of [true, false]) {
    it.each(gemmCases.map((c) => [`${c.M}x${c.N}x${c.K} shared=${shared}`, c] as const))(
      "parallel GEMM matches gemmRef: %s",
      (_, c) => {
        const prev = setGemmParallelThreshold(0); // split these small products too
        try {
          expect(gemmMaxError(gemmParallel, { ...c, shared })).toBeLessThan(gemmTolerance(c.K));
        } finally {
          setGemmParallelThreshold(prev);
        }
      },
    );
  }

  it("parallel GEMM above the default threshold matches gemmRef", () => {
    const c = {
      M: 300,
      N: 260,
      K: 40,
      transA: false,
      transB: true,
      alpha: 1,
      beta: 0,
      shared: true,
    };
    expect(c.M * c.N * c.K).toBeGreaterThan(PARALLEL_MIN_MACS);
    expect(gemmMaxError(gemmParallel, c)).toBeLessThan(gemmTolerance(c.K));
  });

  it("rejects a negative threshold", () => {
    expect(() => setGemmParallelThreshold(-1)).toThrow(/macs must be ≥ 0, got -1/);
  });

  it("stops: later calls run on the calling thread", async () => {
    await stopThreadPool();
    expect(threadCount()).toBe(1);
    const out = sharedI32(50);
    const owner = sharedI32(50).fill(-1);
    parallelFor(fillKernel, 50, { out, owner });
    expect(new Set(owner)).toEqual(new Set([threadId]));
    expect(await startThreadPool(2)).toBe(2);
    expect(threadCount()).toBe(2);
  });

  it("rejects a bad thread count", async () => {
    await expect(startThreadPool(0)).rejects.toThrow(/threads must be a positive integer, got 0/);
  });
});
