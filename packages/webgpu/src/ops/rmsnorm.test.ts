import { rmsnorm as cpuRmsnorm, type Tensor } from "@loop/tensor";
import { checkAgainstCpu, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { rmsnorm } from "./rmsnorm.js";

const ctx = await gpuForTests("webgpu rmsnorm");

describe.runIf(ctx)("webgpu rmsnorm against the CPU op", () => {
  for (const [shape, eps] of [
    [[2, 3, 40], 1e-5],
    [[1, 1, 300], 1e-6], // D > one workgroup's 256 threads, T = 1
    [[130, 5], 1e-5],
    [[600, 70], 1e-5], // ∂w over three row blocks: their partials summed when read
  ] as const)
    it(`x [${shape.join(",")}], eps ${eps}`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: shape[0] + shape[shape.length - 1]!,
        inputs: [{ shape }, { shape: [shape[shape.length - 1]!] }],
        cpu: ([x, w]) => cpuRmsnorm(x as Tensor, w as Tensor, eps),
        gpu: ([x, w]) => rmsnorm(x!, w!, eps),
      });
    });

  it("a weight that needs no gradient", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 5,
      inputs: [{ shape: [4, 8] }, { shape: [8], grad: false }],
      cpu: ([x, w]) => cpuRmsnorm(x as Tensor, w as Tensor),
      gpu: ([x, w]) => rmsnorm(x!, w!),
    });
  });

  it("an input that needs no gradient (the weight's column sum alone in the dispatch)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 6,
      inputs: [{ shape: [300, 8], grad: false }, { shape: [8] }],
      cpu: ([x, w]) => cpuRmsnorm(x as Tensor, w as Tensor),
      gpu: ([x, w]) => rmsnorm(x!, w!),
    });
  });

  it("names the shapes on bad input", () => {
    const x = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    expect(() => rmsnorm(x, x)).toThrow(/weight must be \[3\] for input \[2,3\], got \[2,3\]/);
    releaseTransients(ctx!);
  });
});
