import type { Tensor } from "@loop/tensor";
import { checkAgainstCpu, gpuForTests, randomData } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { gatedRmsnorm } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { gatedRmsnorm as gatedRmsnormCpu } from "../index.js";

const ctx = await gpuForTests("webgpu gatedRmsnorm");

describe.runIf(ctx)("webgpu gatedRmsnorm", () => {
  it.each([
    { shape: [2, 3, 12], G: 3, seed: 1 },
    { shape: [1, 1, 8], G: 1, seed: 2 },
    // a group wider than the workgroup (strided loops) and rows over one column-sum block
    { shape: [300, 260], G: 1, seed: 3 },
    { shape: [2, 5, 24], G: 4, seed: 4 },
  ])("matches the CPU op and its gradients for x $shape, G=$G", async ({ shape, G, seed }) => {
    const Di = shape[shape.length - 1]!;
    await checkAgainstCpu(ctx!, {
      inputs: [
        { name: "x", values: randomData(shape, seed), shape },
        { name: "z", values: randomData(shape, seed + 1), shape },
        { name: "weight", values: randomData([Di], seed + 2, 0.5, 1.5), shape: [Di] },
      ],
      cpu: ([x, z, w]: Tensor[]) => [gatedRmsnormCpu(x!, z!, w!, G, 1e-5)],
      gpu: ([x, z, w]) => [gatedRmsnorm(x!, z!, w!, G, 1e-5)],
      seed: seed + 20,
    });
    releaseTransients(ctx!);
  });

  // the backward's dispatch holds the (row, group) items and ∂weight's column sum: each alone
  it.each([
    { grads: [false, false, true], seed: 5 },
    { grads: [true, true, false], seed: 6 },
  ])("with gradients only for $grads (x, z, weight)", async ({ grads, seed }) => {
    const shape = [300, 24];
    await checkAgainstCpu(ctx!, {
      inputs: [
        { name: "x", values: randomData(shape, seed), shape, grad: grads[0] },
        { name: "z", values: randomData(shape, seed + 1), shape, grad: grads[1] },
        {
          name: "weight",
          values: randomData([24], seed + 2, 0.5, 1.5),
          shape: [24],
          grad: grads[2],
        },
      ],
      cpu: ([x, z, w]: Tensor[]) => [gatedRmsnormCpu(x!, z!, w!, 2, 1e-5)],
      gpu: ([x, z, w]) => [gatedRmsnorm(x!, z!, w!, 2, 1e-5)],
      seed: seed + 20,
    });
    releaseTransients(ctx!);
  });

  it("names the problem on bad input", () => {
    const x = uploadTensor(ctx!, new Float32Array(12), [2, 6]);
    const w = uploadTensor(ctx!, new Float32Array(6), [6]);
    expect(() => gatedRmsnorm(x, x, w, 4)).toThrow(
      /gatedRmsnorm: nGroups must be a positive divisor of the channel count 6, got 4/,
    );
    releaseTransients(ctx!);
  });
});
