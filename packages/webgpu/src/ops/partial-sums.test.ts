/**
 * Split-K partial sums left in their tensor (GpuTensor.deferSum, ops/gemm.ts finishSplitK) and
 * summed by their consumer: the residual add (elementwise add) and the norm's backward (rmsnorm's
 * ∂y) read the partials and compute the very bits the split-K sum would have written, without
 * its dispatch; any other reader gets the sum written first. Checked against the settled path
 * (the same op on a tensor whose sum was forced by reading its buffer) and the CPU oracle.
 */
import { linear as cpuLinear, Tensor } from "@loop/tensor";
import { expectClose, gpuForTests, randomData } from "@loop/test-support-gpu";
import { afterEach, describe, expect, it } from "vitest";
import { backwardGpu } from "../backward.js";
import { gpuParameter, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { gpuNoGrad } from "../tape.js";
import { addTensors, scale } from "./elementwise.js";
import { splitKFor } from "./gemm.js";
import { linear } from "./matmul.js";
import { rmsnorm } from "./rmsnorm.js";

const ctx = await gpuForTests("webgpu split-K partial sums");

const SUM = "gemm_splitk_sum";
const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer));

describe.runIf(ctx)("webgpu: split-K partials summed by their consumer", () => {
  afterEach(() => releaseTransients(ctx!));
  // 16 rows, 16 outputs, K = 1024: one 64×64 tile, so the product splits K in 4
  const M = 16;
  const N = 16;
  const K = 1024;

  it("the shape takes split-K", () => {
    expect(splitKFor(M, N, K)).toBe(4);
  });

  it("a linear's partials read by the add: the settled sum's bits, no sum dispatch", async () => {
    const x = uploadTensor(ctx!, randomData([M, K], 1), [M, K]);
    const w = uploadTensor(ctx!, randomData([N, K], 2), [N, K]);
    const h = uploadTensor(ctx!, randomData([M, N], 3), [M, N]);
    ctx!.resetCounters();
    const fused = gpuNoGrad(() => {
      const y = linear(x, w);
      expect(y.partialSums?.S).toBe(4);
      return addTensors(h, y);
    });
    expect(ctx!.counters().byKernel[SUM]).toBeUndefined();
    const got = await fused.read();
    ctx!.resetCounters();
    const y = gpuNoGrad(() => linear(x, w));
    void y.buffer; // any other read sums the partials first
    expect(y.partialSums).toBeNull();
    expect(ctx!.counters().byKernel[SUM]).toBe(1);
    const settled = await addTensors(h, y).read();
    expect(bits(got)).toEqual(bits(settled));
    // and the CPU oracle
    const cpuY = cpuLinear(
      new Tensor(randomData([M, K], 1), [M, K]),
      new Tensor(randomData([N, K], 2), [N, K]),
    );
    const hd = randomData([M, N], 3);
    const want = cpuY.data.map((v, i) => v + hd[i]!);
    await expectClose(got, want, "y + h", { atol: 1e-3, rtol: 1e-4 });
  });

  it("∂y of a norm left as the projection's partials: the norm's backward gives the settled bits", async () => {
    // u = rmsnorm(x, g); y = u·Wᵀ with W [K, N]: ∂u = ∂y·W sums K = 1024 outputs (split-K)
    const run = async (forceSum: boolean) => {
      const x = gpuParameter(ctx!, randomData([M, N], 4), [M, N]);
      const g = gpuParameter(ctx!, randomData([N], 5, 0.5, 1.5), [N]);
      const w = uploadTensor(ctx!, randomData([K, N], 6), [K, N]);
      const u = rmsnorm(x, g);
      // × 1 (exact) reads ∂u through another op, which sums the partials first
      const y = linear(forceSum ? scale(u, 1) : u, w);
      ctx!.resetCounters();
      backwardGpu(y, uploadTensor(ctx!, randomData([M, K], 7), [M, K]));
      const sums = ctx!.counters().byKernel[SUM] ?? 0;
      const out = { gx: await x.grad!.read(), gg: await g.grad!.read(), sums };
      x.dispose();
      g.dispose();
      w.dispose();
      return out;
    };
    const fused = await run(false);
    const settled = await run(true);
    expect(fused.sums).toBe(0);
    expect(settled.sums).toBe(1);
    expect(bits(fused.gx)).toEqual(bits(settled.gx));
    expect(bits(fused.gg)).toEqual(bits(settled.gg));
  });
});
