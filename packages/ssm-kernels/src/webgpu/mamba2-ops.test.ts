import type { Tensor } from "@loop/tensor";
import { checkAgainstCpu, gpuForTests, randomData } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { addDSkip, softplusBias } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { addDSkip as addDSkipCpu, softplusBias as softplusBiasCpu } from "../index.js";

const ctx = await gpuForTests("webgpu mamba2 ops");

describe.runIf(ctx)("webgpu softplusBias", () => {
  it.each([
    { shape: [2, 5, 3], seed: 1 },
    { shape: [1, 1, 4], seed: 2 },
    // more rows than one column-sum group: the bias gradient takes two stages
    { shape: [3, 200, 2], seed: 3 },
  ])("matches the CPU op and its gradients for raw $shape", async ({ shape, seed }) => {
    const H = shape[shape.length - 1]!;
    const raw = randomData(shape, seed);
    // wide range: both tails of softplus and σ
    for (let i = 0; i < raw.length; i += 7) raw[i] = raw[i]! * 20;
    await checkAgainstCpu(ctx!, {
      inputs: [
        { name: "raw", values: raw, shape },
        { name: "bias", values: randomData([H], seed + 10), shape: [H] },
      ],
      cpu: ([r, b]: Tensor[]) => [softplusBiasCpu(r!, b!)],
      gpu: ([r, b]) => [softplusBias(r!, b!)],
      seed: seed + 20,
    });
    releaseTransients(ctx!);
  });

  it.each([
    { shape: [2, 5, 3], seed: 31 },
    { shape: [3, 200, 2], seed: 32 },
  ])(
    "with a dt limit: clamped values, zero gradient outside, as the CPU op ($shape)",
    async ({ shape, seed }) => {
      const H = shape[shape.length - 1]!;
      const limit = [0.4, 1.2] as const;
      await checkAgainstCpu(ctx!, {
        inputs: [
          { name: "raw", values: randomData(shape, seed), shape },
          { name: "bias", values: randomData([H], seed + 10), shape: [H] },
        ],
        cpu: ([r, b]: Tensor[]) => [softplusBiasCpu(r!, b!, limit)],
        gpu: ([r, b]) => [softplusBias(r!, b!, limit)],
        seed: seed + 20,
      });
      releaseTransients(ctx!);
    },
  );

  it("names the shapes on bad input", () => {
    const raw = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const bias = uploadTensor(ctx!, new Float32Array(2), [2]);
    expect(() => softplusBias(raw, bias)).toThrow(/softplusBias: bias must be \[3\], got \[2\]/);
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("webgpu addDSkip", () => {
  it.each([
    { shape: [2, 3, 4, 5], seed: 4 },
    { shape: [1, 1, 3, 1], seed: 5 },
    { shape: [2, 150, 2, 3], seed: 6 },
  ])("matches the CPU op and its gradients for y $shape", async ({ shape, seed }) => {
    const H = shape[shape.length - 2]!;
    await checkAgainstCpu(ctx!, {
      inputs: [
        { name: "y", values: randomData(shape, seed), shape },
        { name: "x", values: randomData(shape, seed + 1), shape },
        { name: "D", values: randomData([H], seed + 2), shape: [H] },
      ],
      cpu: ([y, x, d]: Tensor[]) => [addDSkipCpu(y!, x!, d!)],
      gpu: ([y, x, d]) => [addDSkip(y!, x!, d!)],
      seed: seed + 20,
    });
    releaseTransients(ctx!);
  });

  it("names the shapes on bad input", () => {
    const y = uploadTensor(ctx!, new Float32Array(6), [1, 2, 3]);
    const d = uploadTensor(ctx!, new Float32Array(3), [3]);
    expect(() => addDSkip(y, y, d)).toThrow(/addDSkip: D must be \[2\], got \[3\]/);
    releaseTransients(ctx!);
  });
});
