import { embedding as cpuEmbedding, type IntTensor, type Tensor } from "@loop/tensor";
import { checkAgainstCpu, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { embedding } from "./embedding.js";

const ctx = await gpuForTests("webgpu embedding");

describe.runIf(ctx)("webgpu embedding against the CPU op", () => {
  it("gathers rows and scatter-adds repeated ids in row order (ids [3,20] over V = 11)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 11,
      inputs: [{ shape: [3, 20], ints: { lo: 0, hi: 11 } }, { shape: [11, 13] }],
      cpu: ([ids, w]) => cpuEmbedding(ids as IntTensor, w as Tensor),
      gpu: ([ids, w]) => embedding(ids!, w!),
      // The same additions in the same order as the CPU op: equal bits.
      tol: 0,
    });
  });

  it("one id for every position, T = 1, and ids that never occur", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 12,
      inputs: [{ shape: [70], ints: new Int32Array(70).fill(3) }, { shape: [300, 4] }],
      cpu: ([ids, w]) => cpuEmbedding(ids as IntTensor, w as Tensor),
      gpu: ([ids, w]) => embedding(ids!, w!),
      tol: 0,
    });
    await checkAgainstCpu(ctx!, {
      seed: 13,
      inputs: [{ shape: [1, 1], ints: new Int32Array([299]) }, { shape: [300, 4] }],
      cpu: ([ids, w]) => cpuEmbedding(ids as IntTensor, w as Tensor),
      gpu: ([ids, w]) => embedding(ids!, w!),
      tol: 0,
    });
  });

  it("an out-of-range id gives a row of NaN, never a read out of bounds", async () => {
    const w = uploadTensor(ctx!, new Float32Array([1, 2, 3, 4]), [2, 2]);
    const ids = uploadTensor(ctx!, new Int32Array([1, 2, -1]), [3]);
    const y = await embedding(ids, w).read();
    expect([...y.slice(0, 2)]).toEqual([3, 4]);
    expect(y.slice(2).every(Number.isNaN)).toBe(true);
    expect(() => embedding(w, w)).toThrow(/ids must be an i32 tensor/);
    releaseTransients(ctx!);
  });
});
