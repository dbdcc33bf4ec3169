import { matmul as cpuMatmul, Rng, tensor } from "@loop/tensor";
import { expectClose, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { gemmThroughput } from "./gemm-probe.js";
import { emptyLike, releaseTransients, uploadTensor } from "./gpu-tensor.js";
import { GEMM_TILE_LARGE } from "./kernels/gemm.js";
import { gemm, splitKFor } from "./ops/gemm.js";

const ctx = await gpuForTests("webgpu GEMM probe");

describe.runIf(ctx)("the GEMM primitive and the throughput probe", () => {
  // The default tile is checked through the ops (ops/matmul.test.ts). NT and TN load both
  // operands both ways; each variant costs seconds of shader compilation on SwiftShader.
  it("the large tile matches the CPU product (x·Wᵀ and gᵀ·x layouts)", async () => {
    const tile = GEMM_TILE_LARGE;
    const [M, N, K] = [130, 70, 21];
    const rng = new Rng(tile.bm);
    for (const [transA, transB] of [
      [false, true],
      [true, false],
    ] as const) {
      const av = rng.fillNormal(new Float32Array(M * K));
      const bv = rng.fillNormal(new Float32Array(K * N));
      const aShape = transA ? [K, M] : [M, K];
      const bShape = transB ? [N, K] : [K, N];
      const want = cpuMatmul(tensor(av, aShape), tensor(bv, bShape), { transA, transB });
      const a = uploadTensor(ctx!, av, aShape);
      const b = uploadTensor(ctx!, bv, bShape);
      const c = emptyLike(ctx!, [M, N]);
      gemm(ctx!, {
        transA,
        transB,
        M,
        N,
        K,
        a: { buf: a.buffer, ld: aShape[1]! },
        b: { buf: b.buffer, ld: bShape[1]! },
        c: { buf: c.buffer, ld: N },
        tile,
      });
      await expectClose(await c.read(), want.data, `transA=${transA} transB=${transB}`, 1e-4);
    }
    releaseTransients(ctx!);
  });

  it("splits a batch over several dispatches past the per-dispatch limit", async () => {
    // The limit is WebGPU's 65535 workgroups along z; a batch that large takes minutes on
    // SwiftShader, so the split runs here with a limit of 2.
    const nb = 5;
    const av = Float32Array.from({ length: nb * 6 }, (_, i) => (i % 7) - 3);
    const bv = Float32Array.from({ length: nb * 6 }, (_, i) => (i % 5) - 2);
    // x·Wᵀ layout: the variant the probe below compiles too.
    const want = cpuMatmul(tensor(av, [nb, 2, 3]), tensor(bv, [nb, 2, 3]), { transB: true });
    const a = uploadTensor(ctx!, av, [nb, 2, 3]);
    const b = uploadTensor(ctx!, bv, [nb, 2, 3]);
    const c = emptyLike(ctx!, [nb, 2, 2]);
    gemm(ctx!, {
      transA: false,
      transB: true,
      M: 2,
      N: 2,
      K: 3,
      batch: nb,
      a: { buf: a.buffer, ld: 3, stride: 6 },
      b: { buf: b.buffer, ld: 3, stride: 6 },
      c: { buf: c.buffer, ld: 2, stride: 4 },
      zLimit: 2,
    });
    expect(await c.read()).toEqual(want.data);
    releaseTransients(ctx!);
  });

  it("split-K sums its chunks in order into a strided C, with bias and accumulation", async () => {
    const [M, N, K, ldc, off] = [3, 4, 70, 6, 2];
    const rng = new Rng(8);
    const av = rng.fillNormal(new Float32Array(M * K));
    const bv = rng.fillNormal(new Float32Array(N * K));
    const bias = rng.fillNormal(new Float32Array(N));
    const c0 = rng.fillNormal(new Float32Array(off + M * ldc));
    const prod = cpuMatmul(tensor(av, [M, K]), tensor(bv, [N, K]), { transB: true }).data;
    const want = Float32Array.from(c0);
    for (let m = 0; m < M; m++)
      for (let n = 0; n < N; n++) want[off + m * ldc + n] += prod[m * N + n]! + bias[n]!;
    const a = uploadTensor(ctx!, av, [M, K]);
    const b = uploadTensor(ctx!, bv, [N, K]);
    const tb = uploadTensor(ctx!, bias, [N]);
    const c = uploadTensor(ctx!, c0, [c0.length]);
    gemm(ctx!, {
      transA: false,
      transB: true,
      M,
      N,
      K,
      a: { buf: a.buffer, ld: K },
      b: { buf: b.buffer, ld: K },
      c: { buf: c.buffer, ld: ldc, off },
      bias: tb.buffer,
      beta: 1,
      splitK: 3,
    });
    await expectClose(await c.read(), want, "split-K", 1e-5);
    expect(splitKFor(3, 5, 600)).toBe(2);
    expect(splitKFor(4096, 4096, 100_000)).toBe(1);
    releaseTransients(ctx!);
  });

  it("reports a positive, finite GFLOP/s (the figure itself belongs to the benchmark)", async () => {
    const r = await gemmThroughput(ctx!, 32, 48, 16, { transB: true, iters: 2 });
    expect(r).toMatchObject({ M: 32, N: 48, K: 16, transA: false, transB: true, iters: 2 });
    expect(r.gflops > 0 && Number.isFinite(r.gflops)).toBe(true);
    await expect(gemmThroughput(ctx!, 0, 1, 1)).rejects.toThrow(
      /positive integers, got 0, 1, 1, 10/,
    );
  });
});
