import {
  linear as cpuLinear,
  linearSplit as cpuLinearSplit,
  matmul as cpuMatmul,
  type Tensor,
} from "@loop/tensor";
import { checkAgainstCpu, gpuForTests, type OracleInput } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { type GpuTensor, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { TRANSPOSES } from "./gemm-cases.test-util.js";
import { linearMulti } from "./linear-multi.js";
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

  // up to three pieces: one GEMM each way over the pieces where they live; four: one per piece
  for (const [name, seed, x, widths] of [
    ["z | xBC | dt (one GEMM each way)", 5, [2, 9, 12], [16, 40, 3]],
    ["three pieces, one empty, over 600 tokens (∂W split along K)", 7, [600, 5], [6, 0, 7]],
    ["four pieces and an empty one (one GEMM per piece)", 4, [2, 9, 12], [16, 0, 40, 3]],
  ] as const)
    it(`linearSplit into ${name}`, async () => {
      const out = widths.reduce((a: number, b: number) => a + b, 0);
      await checkAgainstCpu(ctx!, {
        seed,
        inputs: [{ shape: [...x] }, { shape: [out, x[x.length - 1]!] }],
        cpu: ([x, w]) => cpuLinearSplit(x as Tensor, w as Tensor, [...widths]),
        gpu: ([x, w]) => linearSplit(x!, w!, [...widths]),
      });
    });

  // q | k | v of attention: one GEMM each way over three weights
  for (const [name, seed, x, grads] of [
    ["x [2,9,12], W [16|8|8, 12]", 8, [2, 9, 12], [true, true, true]],
    ["600 tokens, the middle weight without gradient", 9, [600, 5], [true, false, true]],
  ] as const)
    it(`linearMulti: ${name}`, async () => {
      const nIn = x[x.length - 1]!;
      await checkAgainstCpu(ctx!, {
        seed,
        inputs: [
          { shape: [...x] },
          ...[16, 8, 8].map((n, k) => ({ shape: [n, nIn], grad: grads[k] })),
        ],
        cpu: ([x, ...ws]) => ws.map((w) => cpuLinear(x as Tensor, w as Tensor)),
        gpu: ([x, ...ws]) => linearMulti(x!, ws as GpuTensor[]),
      });
    });
});
