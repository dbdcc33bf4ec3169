/**
 * The row kernels' subgroup reductions (kernels/wgsl-subgroup-reduce.ts) against the plain tree
 * and the CPU oracle: log-softmax, cross-entropy and rmsnorm, forward and every input gradient,
 * on rows narrower and wider than a workgroup, run once with the subgroup variants and once with
 * them forced off (`ctx.subgroupReductions = false`, the fallback of devices without the
 * feature): each run matches the CPU ops, and the two give the same bits.
 *
 * SwiftShader has `subgroups` (smallest subgroup 4 lanes), so there both paths run natively; on an
 * adapter without the feature only the plain path exists, and the test says so (a failure under
 * CI, whose SwiftShader has it).
 */
import {
  crossEntropy as cpuCrossEntropy,
  logSoftmax as cpuLogSoftmax,
  rmsnorm as cpuRmsnorm,
  type IntTensor,
  type Tensor,
} from "@loop/tensor";
import { checkAgainstCpu, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { backwardGpu } from "../backward.js";
import type { GpuContext } from "../gpu-context.js";
import { type GpuTensor, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { logSoftmax } from "./cross-entropy.js";
import { meanCrossEntropy } from "./cross-entropy.test-util.js";
import { rmsnorm } from "./rmsnorm.js";

const ctx = await gpuForTests("webgpu subgroup reductions");

const crossEntropy = meanCrossEntropy;

/** The op's outputs and input gradients (seeded with fixed values) as plain arrays. */
async function bits(
  c: GpuContext,
  make: (xs: GpuTensor[]) => GpuTensor,
  inputs: { data: Float32Array | Int32Array; shape: number[]; grad: boolean }[],
) {
  const xs = inputs.map((i) =>
    uploadTensor(c, i.data, i.shape, { persistent: true, requiresGrad: i.grad }),
  );
  const y = make(xs);
  const seed = uploadTensor(
    c,
    Float32Array.from({ length: y.size }, (_, i) => Math.sin(i + 1)),
    y.shape,
  );
  backwardGpu(y, seed);
  const out = [Array.from(await y.read())];
  for (const x of xs) if (x.grad) out.push(Array.from(await x.grad.read()));
  for (const x of xs) x.dispose();
  releaseTransients(c);
  return out;
}

const rows = (n: number, w: number, seed: number) =>
  Float32Array.from({ length: n * w }, (_, i) => 3 * Math.sin(seed * 7.1 + i * 1.37));

describe.runIf(ctx)("webgpu row reductions: subgroup variants against the plain tree", () => {
  const shapes: [number, number][] = [
    [3, 5],
    [4, 300],
    [2, 1030],
  ];
  it(`log-softmax, cross-entropy and rmsnorm give the same bits both ways, and match the CPU (${ctx?.subgroupMinSize ? `subgroups of at least ${ctx.subgroupMinSize} lanes` : "no subgroups on this adapter"})`, async () => {
    const c = ctx!;
    if (c.subgroupMinSize === null) {
      const why = `webgpu subgroup reductions: ${c.adapterName} has no subgroups; only the plain path ran`;
      process.stdout.write(`${why}\n`);
      if (process.env.CI) throw new Error(why);
    }
    const paths = c.subgroupMinSize === null ? [false] : [true, false];
    const results: number[][][][] = [];
    try {
      for (const sub of paths) {
        c.subgroupReductions = sub;
        const got: number[][][] = [];
        for (const [n, w] of shapes) {
          const x = rows(n, w, w);
          const targets = Int32Array.from({ length: n }, (_, i) => (i * 5) % w);
          const weight = Float32Array.from({ length: w }, (_, i) => 1 + 0.01 * i);
          got.push(
            await bits(c, ([a]) => logSoftmax(a!), [{ data: x, shape: [n, w], grad: true }]),
          );
          got.push(
            await bits(c, ([a, t]) => crossEntropy(a!, t!), [
              { data: x, shape: [n, w], grad: true },
              { data: targets, shape: [n], grad: false },
            ]),
          );
          got.push(
            await bits(c, ([a, g]) => rmsnorm(a!, g!, 1e-5), [
              { data: x, shape: [n, w], grad: true },
              { data: weight, shape: [w], grad: true },
            ]),
          );
          // and against the CPU ops
          await checkAgainstCpu(c, {
            seed: w,
            inputs: [{ shape: [n, w], range: [-4, 4] }],
            cpu: ([a]) => cpuLogSoftmax(a as Tensor),
            gpu: ([a]) => logSoftmax(a!),
          });
          await checkAgainstCpu(c, {
            seed: w + 1,
            inputs: [
              { shape: [n, w], range: [-4, 4] },
              { shape: [n], ints: targets },
            ],
            cpu: ([a, t]) => cpuCrossEntropy(a as Tensor, t as IntTensor),
            gpu: ([a, t]) => crossEntropy(a!, t!),
          });
          await checkAgainstCpu(c, {
            seed: w + 2,
            inputs: [{ shape: [n, w] }, { shape: [w] }],
            cpu: ([a, g]) => cpuRmsnorm(a as Tensor, g as Tensor, 1e-5),
            gpu: ([a, g]) => rmsnorm(a!, g!, 1e-5),
          });
        }
        results.push(got);
      }
    } finally {
      if (c.subgroupMinSize !== null) c.subgroupReductions = true;
    }
    if (results.length === 2) expect(results[0]).toEqual(results[1]);
  });
});
