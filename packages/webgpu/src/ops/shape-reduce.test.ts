import {
  concat as cpuConcat,
  mean as cpuMean,
  meanLast as cpuMeanLast,
  sliceRows as cpuSliceRows,
  split as cpuSplit,
  stack as cpuStack,
  sum as cpuSum,
  sumLast as cpuSumLast,
  type Tensor,
} from "@loop/tensor";
import { checkAgainstCpu, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { mean, meanLast, sum, sumLast } from "./reduce.js";
import { concat, sliceRows, split, stack } from "./shape.js";

const ctx = await gpuForTests("webgpu reductions and shape ops");

describe.runIf(ctx)("webgpu reductions against the CPU ops", () => {
  const cases = [
    ["sum", cpuSum, sum],
    ["mean", cpuMean, mean],
    ["sumLast", cpuSumLast, sumLast],
    ["meanLast", cpuMeanLast, meanLast],
  ] as const;
  for (const [name, cpuOp, gpuOp] of cases)
    for (const shape of [[3, 5], [2, 3, 150], [5000], [4, 1]])
      it(`${name} of [${shape.join(",")}]`, async () => {
        await checkAgainstCpu(ctx!, {
          seed: shape.length,
          inputs: [{ shape }],
          cpu: ([x]) => cpuOp(x as Tensor),
          gpu: ([x]) => gpuOp(x!),
        });
      });

  it("gives the same bits on every run (fixed summation order)", async () => {
    const v = Float32Array.from({ length: 9000 }, (_, i) => Math.sin(i) * 1e3);
    const x = uploadTensor(ctx!, v, [9000]);
    const first = await sum(x).read();
    for (let k = 0; k < 3; k++) expect(await sum(x).read()).toEqual(first);
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu shape ops against the CPU ops", () => {
  it("concat along the last axis (one input without gradient)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 41,
      inputs: [{ shape: [2, 3, 4] }, { shape: [2, 3, 1], grad: false }, { shape: [2, 3, 7] }],
      cpu: (xs) => cpuConcat(xs as Tensor[]),
      gpu: (xs) => concat(xs),
    });
  });

  it("split with an empty piece and a piece whose output is unused", async () => {
    const widths = [3, 0, 5, 2];
    await checkAgainstCpu(ctx!, {
      seed: 42,
      inputs: [{ shape: [4, 10] }],
      cpu: ([x]) => cpuSplit(x as Tensor, widths).slice(0, 3),
      gpu: ([x]) => split(x!, widths).slice(0, 3),
    });
  });

  it("sliceRows, including an empty slice", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 43,
      inputs: [{ shape: [6, 2, 3] }],
      cpu: ([x]) => [cpuSliceRows(x as Tensor, 2, 5), cpuSliceRows(x as Tensor, 1, 1)],
      gpu: ([x]) => [sliceRows(x!, 2, 5), sliceRows(x!, 1, 1)],
    });
  });

  it("stack on a new leading axis", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 44,
      inputs: [{ shape: [3, 5] }, { shape: [3, 5] }, { shape: [3, 5], grad: false }],
      cpu: (xs) => cpuStack(xs as Tensor[]),
      gpu: (xs) => stack(xs),
    });
  });

  it("names bad shapes and ranges", () => {
    const a = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const b = uploadTensor(ctx!, new Float32Array(6), [3, 2]);
    expect(() => concat([a, b])).toThrow(/leading shapes differ: \[2,3\] vs \[3,2\]/);
    expect(() => stack([a, b])).toThrow(/shapes differ: \[2,3\] vs \[3,2\]/);
    expect(() => sliceRows(a, 1, 3)).toThrow(/range \[1, 3\) outside axis 0 of \[2,3\]/);
    expect(() => split(a, [2, 2])).toThrow(/widths \[2,2\] do not sum to last axis 3/);
    releaseTransients(ctx!);
  });
});
