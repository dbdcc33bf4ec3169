import { backward, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { checkAgainstCpu, expectClose, gpuForTests, toGpu } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { backwardGpu, rope, ropePair } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { rope as cpuRope } from "../index.js";

const ctx = await gpuForTests("webgpu rope");

describe.runIf(ctx)("webgpu rope matches @loop/attention's rope", () => {
  const cases: [number[], { theta?: number; offset?: number }][] = [
    [[2, 5, 3, 8], {}],
    [[1, 1, 2, 4], { offset: 7 }],
    [[1, 9, 1, 6], { theta: 500, offset: 1000 }],
  ];
  for (const [shape, opts] of cases) {
    it(`x [${shape.join(",")}] ${JSON.stringify(opts)}: forward and ∂x`, async () => {
      const x = randn(shape, 1);
      const dy = randn(shape, 2, { requiresGrad: false });
      const y = cpuRope(x, opts);
      backward([y], [dy.data]);
      const gx = toGpu(ctx!, x);
      const gy = rope(gx, opts);
      await expectClose(gy, y.data, "y", 1e-5);
      backwardGpu(gy, toGpu(ctx!, dy, false));
      await expectClose(gx.grad!, x.grad!, "∂x", 1e-5);
      gx.dispose();
      releaseTransients(ctx!);
    });
  }

  // q and k rotated by one dispatch each way (the attention op's): the values and gradients of
  // two rope calls; Hq ≠ Hk (grouped queries), and more pairs than one workgroup holds
  for (const [Hq, Hk, T] of [
    [4, 2, 5],
    [2, 1, 70],
  ] as const)
    it(`ropePair q [2,${T},${Hq},8], k [2,${T},${Hk},8]: forward and both gradients`, async () => {
      const opts = { theta: 500, offset: 3 };
      await checkAgainstCpu(ctx!, {
        seed: T,
        inputs: [{ shape: [2, T, Hq, 8] }, { shape: [2, T, Hk, 8] }],
        cpu: ([q, k]) => [cpuRope(q as Tensor, opts), cpuRope(k as Tensor, opts)],
        gpu: ([q, k]) => ropePair(q!, k!, opts),
        tol: 1e-5,
      });
    });

  it("names the problem on bad shapes", () => {
    const x = uploadTensor(ctx!, new Float32Array(12), [2, 2, 3]);
    expect(() => rope(x)).toThrow(/webgpu rope: x must be \[B, T, H, head_dim\], got \[2,2,3\]/);
    const odd = uploadTensor(ctx!, new Float32Array(6), [1, 2, 1, 3]);
    expect(() => rope(odd)).toThrow(/head_dim must be a positive even integer, got 3/);
    releaseTransients(ctx!);
  });
});
