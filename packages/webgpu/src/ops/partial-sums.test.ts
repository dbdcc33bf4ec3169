/**
 * Partial sums left in their tensor (GpuTensor.deferSum, `partialsTarget` in ops/gemm.ts) and
 * summed by their consumer: the residual add (elementwise add) and the norm's backward (rmsnorm's
 * ∂y) read a split-K GEMM's partials and compute the very bits the split-K sum would have
 * written, without its dispatch; any other reader gets the sum written first. Checked against
 * the settled path (the same op on a tensor whose sum was forced by reading its buffer) and the
 * CPU oracle. A weight used several times gathers the partials of every use (split-K ∂W, a
 * column sum over several row blocks) and is summed once, when read.
 */
import { add as cpuAdd, linear as cpuLinear, rmsnorm as cpuRmsnorm, Tensor } from "@loop/tensor";
import { checkAgainstCpu, expectClose, gpuForTests, randomData } from "@loop/test-support-gpu";
import { afterEach, describe, expect, it } from "vitest";
import { backwardGpu } from "../backward.js";
import { type GpuTensor, gpuParameter, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { gpuNoGrad } from "../tape.js";
import { add, scale } from "./elementwise.js";
import { addTensors } from "./elementwise-plain.js";
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

  it("a weight used twice gathers both uses' partials and is summed once, when read", async () => {
    // z = rmsnorm(x₁, g)·Wᵀ + rmsnorm(x₂, g)·Wᵀ over R = 1024 rows: each ∂W = ∂zᵀ·u sums K = R
    // rows (split-K in 4), each ∂g a column sum of 4 row blocks of 256
    const R = 1024;
    const twice = (x1: GpuTensor, x2: GpuTensor, g: GpuTensor, w: GpuTensor) =>
      add(linear(rmsnorm(x1, g), w), linear(rmsnorm(x2, g), w));
    const inputs = [{ shape: [R, N] }, { shape: [R, N] }, { shape: [N] }, { shape: [M, N] }];
    expect(splitKFor(M, N, R)).toBe(4);
    await checkAgainstCpu(ctx!, {
      seed: 8,
      inputs,
      cpu: ([x1, x2, g, w]) =>
        cpuAdd(
          cpuLinear(cpuRmsnorm(x1 as Tensor, g as Tensor), w as Tensor),
          cpuLinear(cpuRmsnorm(x2 as Tensor, g as Tensor), w as Tensor),
        ),
      gpu: ([x1, x2, g, w]) => twice(x1!, x2!, g!, w!),
      tol: { atol: 2e-3, rtol: 1e-4 },
    });
    // the dispatches: no sum during the backward; one per weight when its gradient is read
    const x1 = uploadTensor(ctx!, randomData([R, N], 9), [R, N]);
    const x2 = uploadTensor(ctx!, randomData([R, N], 10), [R, N]);
    const g = gpuParameter(ctx!, randomData([N], 11, 0.5, 1.5), [N]);
    const w = gpuParameter(ctx!, randomData([M, N], 12), [M, N]);
    const z = twice(x1, x2, g, w);
    ctx!.resetCounters();
    backwardGpu(z, uploadTensor(ctx!, randomData([R, M], 13), [R, M]));
    expect(ctx!.counters().byKernel[SUM]).toBeUndefined();
    expect(w.grad!.partialSums?.S).toBe(4);
    expect(g.grad!.partialSums?.S).toBe(4);
    await w.grad!.read();
    await g.grad!.read();
    expect(ctx!.counters().byKernel[SUM]).toBe(2);
    expect(w.grad!.partialSums).toBeNull();
    g.dispose();
    w.dispose();
  });
});
