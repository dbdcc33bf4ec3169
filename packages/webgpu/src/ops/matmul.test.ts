import {
  linear as cpuLinear,
  linearSplit as cpuLinearSplit,
  matmul as cpuMatmul,
  type Tensor,
} from "@loop/tensor";
import { checkAgainstCpu, gpuForTests, type OracleInput } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { TRANSPOSES } from "./gemm-cases.test-util.js";
import { linearSplit } from "./linear-split.js";
import { linear, matmul } from "./matmul.js";

const ctx = await gpuForTests("webgpu matmul");

describe.runIf(ctx)("webgpu matmul against the CPU op", () => {
  // Sizes straddle the 64×64×16 tile: partial tiles in every dimension, and K = 1.
  const shapes: [number, number, number][] = [
    [5, 7, 3],
    [70, 33, 17],
    [1, 65, 1],
  ];
  for (const [M, N, K] of shapes)
    for (const [transA, transB] of TRANSPOSES)
      it(`M=${M} N=${N} K=${K} transA=${transA} transB=${transB}, batched [2,…]`, async () => {
        const aShape = [2, transA ? K : M, transA ? M : K];
        const bShape = [2, transB ? N : K, transB ? K : N];
        await checkAgainstCpu(ctx!, {
          seed: M * 100 + N + K,
          inputs: [{ shape: aShape }, { shape: bShape }],
          cpu: ([a, b]) => cpuMatmul(a as Tensor, b as Tensor, { transA, transB }),
          gpu: ([a, b]) => matmul(a!, b!, { transA, transB }),
        });
      });

  for (const [transA, transB] of TRANSPOSES)
    it(`a rank-2 B shared by a batch [3,2,…] (transA=${transA} transB=${transB}) sums its gradient`, async () => {
      const [M, N, K] = [9, 6, 20];
      await checkAgainstCpu(ctx!, {
        seed: 7,
        inputs: [
          { shape: [3, 2, transA ? K : M, transA ? M : K] },
          { shape: [transB ? N : K, transB ? K : N] },
        ],
        cpu: ([a, b]) => cpuMatmul(a as Tensor, b as Tensor, { transA, transB }),
        gpu: ([a, b]) => matmul(a!, b!, { transA, transB }),
      });
    });

  it("names the shapes on bad input", () => {
    const a = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const b = uploadTensor(ctx!, new Float32Array(8), [4, 2]);
    expect(() => matmul(a, b)).toThrow(/inner sizes differ \(3 vs 4\) for \[2,3\] · \[4,2\]/);
    expect(() => linear(a, b)).toThrow(/input \[2,3\] has last axis 3, weight expects 2/);
    const x = uploadTensor(ctx!, new Float32Array(3), [1, 3]);
    expect(() => linearSplit(x, a, [1, 2])).toThrow(/widths \[1,2\] must be .* summing to the 2/);
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu linear and linearSplit against the CPU ops", () => {
  const linearCases: { name: string; seed: number; inputs: OracleInput[] }[] = [
    {
      name: "linear without bias, x [2,5,24], W [40,24]",
      seed: 1,
      inputs: [{ shape: [2, 5, 24] }, { shape: [40, 24] }],
    },
    {
      name: "linear with bias over more rows than one reduction chunk (x [130,7], W [3,7])",
      seed: 2,
      inputs: [{ shape: [130, 7] }, { shape: [3, 7] }, { shape: [3] }],
    },
    {
      name: "linear whose weight gradient splits its long K (600 tokens) into chunks",
      seed: 6,
      inputs: [{ shape: [600, 5] }, { shape: [3, 5] }, { shape: [3] }],
    },
    {
      name: "linear with T = 1 and an input that needs no gradient",
      seed: 3,
      inputs: [{ shape: [1, 1, 66], grad: false }, { shape: [5, 66] }],
    },
  ];
  for (const { name, seed, inputs } of linearCases) {
    it(name, async () => {
      await checkAgainstCpu(ctx!, {
        seed,
        inputs,
        cpu: ([x, w, b]) => cpuLinear(x as Tensor, w as Tensor, b as Tensor | undefined),
        gpu: ([x, w, b]) => linear(x!, w!, b),
      });
    });
  }

  it("linearSplit into z | xBC | dt (and an empty piece)", async () => {
    const widths = [16, 0, 40, 3];
    await checkAgainstCpu(ctx!, {
      seed: 4,
      inputs: [{ shape: [2, 9, 12] }, { shape: [59, 12] }],
      cpu: ([x, w]) => cpuLinearSplit(x as Tensor, w as Tensor, widths),
      gpu: ([x, w]) => linearSplit(x!, w!, widths),
    });
  });
});
