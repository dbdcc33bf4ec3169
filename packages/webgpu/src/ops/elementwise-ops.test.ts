import {
  add as cpuAdd,
  div as cpuDiv,
  exp as cpuExp,
  log as cpuLog,
  logsigmoid as cpuLogsigmoid,
  mul as cpuMul,
  neg as cpuNeg,
  sigmoid as cpuSigmoid,
  silu as cpuSilu,
  siluSplit as cpuSiluSplit,
  softplus as cpuSoftplus,
  sub as cpuSub,
  type Tensor,
} from "@loop/tensor";
import { checkAgainstCpu, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import type { GpuTensor } from "../gpu-tensor.js";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { add, div, mul, sub } from "./binary.js";
import { siluSplit } from "./silu-split.js";
import { exp, log, logsigmoid, neg, negExp, sigmoid, silu, softplus } from "./unary.js";

const ctx = await gpuForTests("webgpu unary and binary ops");

type Pair = [(x: Tensor) => Tensor, (x: GpuTensor) => GpuTensor];
const unaries: Record<string, Pair> = {
  exp: [cpuExp, exp],
  neg: [cpuNeg, neg],
  // the fused −exp (the SSM's A from A_log) against the two CPU ops it replaces
  negExp: [(x) => cpuNeg(cpuExp(x)), negExp],
  sigmoid: [cpuSigmoid, sigmoid],
  logsigmoid: [cpuLogsigmoid, logsigmoid],
  silu: [cpuSilu, silu],
  softplus: [cpuSoftplus, softplus],
};

describe.runIf(ctx)("webgpu unary ops against the CPU ops", () => {
  for (const [name, [cpuOp, gpuOp]] of Object.entries(unaries))
    it(`${name} over [-30, 30] (both tails)`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: name.length,
        inputs: [{ shape: [3, 101], range: [-30, 30] }],
        cpu: ([x]) => cpuOp(x as Tensor),
        gpu: ([x]) => gpuOp(x!),
      });
    });

  it("log of positive values", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 9,
      inputs: [{ shape: [77], range: [0.01, 20] }],
      cpu: ([x]) => cpuLog(x as Tensor),
      gpu: ([x]) => log(x!),
    });
  });

  it("softplus and logsigmoid keep the relative precision of their small tails", async () => {
    const x = uploadTensor(ctx!, new Float32Array([-20, -40]), [2]);
    const sp = await softplus(x).read();
    expect(sp[0]! / Math.exp(-20)).toBeCloseTo(1, 5);
    expect(sp[1]! / Math.exp(-40)).toBeCloseTo(1, 5);
    const ls = await logsigmoid(neg(x)).read();
    expect(ls[0]! / -Math.exp(-20)).toBeCloseTo(1, 5);
    releaseTransients(ctx!);
  });
});

type Bin = [(a: Tensor, b: Tensor) => Tensor, (a: GpuTensor, b: GpuTensor) => GpuTensor];
const binaries: Record<string, Bin> = {
  add: [cpuAdd, add],
  sub: [cpuSub, sub],
  mul: [cpuMul, mul],
  div: [cpuDiv, div],
};
// Broadcasts the model uses (a bias or gain [D] over [B,T,D], a per-head [H,1] over [B,T,H,P],
// a scalar) and a general one with size-1 axes on both sides.
const broadcasts: [number[], number[]][] = [
  [
    [2, 3, 5],
    [2, 3, 5],
  ],
  [[2, 3, 5], [5]],
  [
    [2, 3, 4, 6],
    [4, 1],
  ],
  [[1], [3, 7]],
  [
    [3, 1, 5],
    [1, 70, 1],
  ],
];

describe.runIf(ctx)("webgpu binary ops with broadcasting against the CPU ops", () => {
  for (const [name, [cpuOp, gpuOp]] of Object.entries(binaries))
    for (const [sa, sb] of broadcasts)
      it(`${name} [${sa.join(",")}] ∘ [${sb.join(",")}]`, async () => {
        await checkAgainstCpu(ctx!, {
          seed: sa.length * 10 + sb.length,
          inputs: [{ shape: sa }, name === "div" ? { shape: sb, range: [0.5, 2] } : { shape: sb }],
          cpu: ([a, b]) => cpuOp(a as Tensor, b as Tensor),
          gpu: ([a, b]) => gpuOp(a!, b!),
        });
      });

  it("names shapes that do not broadcast", () => {
    const a = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const b = uploadTensor(ctx!, new Float32Array(2), [2]);
    expect(() => mul(a, b)).toThrow(/mul: shapes \[2,3\] and \[2\] do not broadcast/);
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu siluSplit against the CPU op", () => {
  it("splits x [2,5,23] into [8,0,12,3], one piece without gradient", async () => {
    const widths = [8, 0, 12, 3];
    await checkAgainstCpu(ctx!, {
      seed: 31,
      inputs: [{ shape: [2, 5, 23], range: [-6, 6] }],
      cpu: ([x]) => cpuSiluSplit(x as Tensor, widths).filter((_, k) => k !== 3),
      gpu: ([x]) => siluSplit(x!, widths).filter((_, k) => k !== 3),
    });
    const x = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    expect(() => siluSplit(x, [1, 1])).toThrow(
      /widths \[1,1\] do not sum to last axis 3 of \[2,3\]/,
    );
    releaseTransients(ctx!);
  });
});
