import type { Tensor } from "@loop/tensor";
import { checkAgainstCpu, gpuForTests, type OracleInput, randomData } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { causalConv1dSiluSplit } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { causalConv1dSiluSplit as convCpu } from "../index.js";

const ctx = await gpuForTests("webgpu causalConv1dSiluSplit");

interface Case {
  B: number;
  T: number;
  widths: number[];
  K: number;
  bias: boolean;
  init: boolean;
  seq: number[] | null;
  /** Pieces the loss reads (default all): the others reach the backward without a gradient. */
  used?: number[];
}

const cases: Case[] = [
  { B: 2, T: 7, widths: [4, 3, 3], K: 4, bias: true, init: false, seq: null },
  { B: 2, T: 7, widths: [4, 3, 3], K: 4, bias: true, init: true, seq: null },
  // documents start at t = 2 and 5 in row 0, at 1 in row 1 (before the width K − 1 runs out)
  {
    B: 2,
    T: 7,
    widths: [5, 2, 2],
    K: 4,
    bias: true,
    init: true,
    seq: [0, 0, 1, 1, 1, 2, 2, 3, 4, 4, 4, 4, 4, 4],
  },
  { B: 1, T: 1, widths: [2, 1], K: 3, bias: false, init: true, seq: null },
  // three pieces (one dispatch each way) where the middle one has no gradient, and an empty one
  { B: 2, T: 5, widths: [4, 3, 2], K: 3, bias: true, init: false, seq: null, used: [0, 2] },
  { B: 1, T: 6, widths: [3, 0, 2], K: 2, bias: true, init: true, seq: null },
  // three pieces over more rows than one column-sum block (∂pre written by its first stage)
  { B: 2, T: 150, widths: [4, 3, 3], K: 4, bias: true, init: false, seq: null },
  { B: 1, T: 300, widths: [3], K: 2, bias: true, init: false, seq: null },
];

describe.runIf(ctx)("webgpu causalConv1dSiluSplit", () => {
  it.each(cases.map((c, i) => ({ ...c, i })))(
    "matches the CPU op and its gradients (case $i: B=$B T=$T K=$K init=$init seq=$seq)",
    async ({ B, T, widths, K, bias, init, seq, used, i }) => {
      const C = widths.reduce((a, b) => a + b, 0);
      const inputs: OracleInput[] = [
        { name: "x", values: randomData([B, T, C], 10 * i + 1), shape: [B, T, C] },
        { name: "weight", values: randomData([C, 1, K], 10 * i + 2), shape: [C, 1, K] },
      ];
      if (bias) inputs.push({ name: "bias", values: randomData([C], 10 * i + 3), shape: [C] });
      if (init)
        inputs.push({
          name: "init",
          values: randomData([B, C, K - 1], 10 * i + 4),
          shape: [B, C, K - 1],
        });
      const seqCpu = seq ? Int32Array.from(seq) : null;
      const seqGpu = seqCpu ? uploadTensor(ctx!, seqCpu, [B * T]) : null;
      const split = <T>(ts: T[]) =>
        [ts[0]!, ts[1]!, bias ? ts[2]! : null, init ? ts[ts.length - 1]! : null] as const;
      await checkAgainstCpu(ctx!, {
        inputs,
        cpu: (ts: Tensor[]) => {
          const [x, w, b, s0] = split(ts);
          const ys = convCpu(x, w, b, s0, widths, seqCpu);
          return used ? used.map((p) => ys[p]!) : ys;
        },
        gpu: (ts) => {
          const [x, w, b, s0] = split(ts);
          const ys = causalConv1dSiluSplit(x, w, b, s0, widths, seqGpu);
          return used ? used.map((p) => ys[p]!) : ys;
        },
        seed: 10 * i + 9,
      });
      releaseTransients(ctx!);
    },
  );

  it("names the problem on bad input", () => {
    const x = uploadTensor(ctx!, new Float32Array(2 * 3 * 4), [2, 3, 4]);
    const w = uploadTensor(ctx!, new Float32Array(4 * 2), [4, 1, 2]);
    expect(() => causalConv1dSiluSplit(x, w, null, null, [2, 1])).toThrow(
      /widths \[2,1\] do not sum to the channels 4 of \[2,3,4\]/,
    );
    const seq = uploadTensor(ctx!, new Int32Array(5), [5]);
    expect(() => causalConv1dSiluSplit(x, w, null, null, [4], seq)).toThrow(
      /seqIdx must be an i32 tensor of \[2,3\] = 6 values/,
    );
    releaseTransients(ctx!);
  });
});
