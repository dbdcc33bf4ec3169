import {
  crossEntropy as cpuCrossEntropy,
  crossEntropyPerToken as cpuCrossEntropyPerToken,
  logSoftmax as cpuLogSoftmax,
  IGNORE_INDEX,
  type IntTensor,
  type Tensor,
} from "@loop/tensor";
import { checkAgainstCpu, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { crossEntropyPerToken, logSoftmax } from "./cross-entropy.js";
import { ceInputs, meanCrossEntropy, targetsWithIgnored } from "./cross-entropy.test-util.js";

const ctx = await gpuForTests("webgpu cross-entropy");

const crossEntropy = meanCrossEntropy;

describe.runIf(ctx)("webgpu cross-entropy and log-softmax against the CPU ops", () => {
  it("logSoftmax over rows wider than a workgroup (x [3,300], scale 5)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 21,
      inputs: [{ shape: [3, 300], range: [-5, 5] }],
      cpu: ([x]) => cpuLogSoftmax(x as Tensor),
      gpu: ([x]) => logSoftmax(x!),
    });
  });

  for (const [B, T, V] of [
    [2, 5, 17],
    [1, 1, 260],
  ] as const) {
    it(`crossEntropyPerToken with ignored targets, logits [${B},${T},${V}]`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: V,
        inputs: ceInputs(B, T, V),
        cpu: ([x, t]) => cpuCrossEntropyPerToken(x as Tensor, t as IntTensor),
        gpu: ([x, t]) => crossEntropyPerToken(x!, t!),
      });
    });
    it(`crossEntropyPerToken then maskedMean (the mean over non-ignored), logits [${B},${T},${V}]`, async () => {
      await checkAgainstCpu(ctx!, {
        seed: V + 1,
        inputs: B * T === 1 ? ceInputs(B, T, V, new Int32Array([5])) : ceInputs(B, T, V),
        cpu: ([x, t]) => cpuCrossEntropy(x as Tensor, t as IntTensor),
        gpu: ([x, t]) => crossEntropy(x!, t!),
      });
    });
  }

  it("crossEntropyPerToken then maskedMean over 300 rows (more than one thread's share of the mean)", async () => {
    await checkAgainstCpu(ctx!, {
      seed: 22,
      inputs: [
        { shape: [300, 6], range: [-4, 4] },
        { shape: [300], ints: targetsWithIgnored(300, 6) },
      ],
      cpu: ([x, t]) => cpuCrossEntropy(x as Tensor, t as IntTensor),
      gpu: ([x, t]) => crossEntropy(x!, t!),
    });
  });

  it("is NaN with every target ignored and with an invalid target; names bad shapes", async () => {
    const x = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const ignored = uploadTensor(ctx!, new Int32Array([IGNORE_INDEX, IGNORE_INDEX]), [2]);
    expect(Number.isNaN((await crossEntropy(x, ignored).read())[0])).toBe(true);
    const bad = uploadTensor(ctx!, new Int32Array([0, 3]), [2]);
    const per = await crossEntropyPerToken(x, bad).read();
    expect(per[0]).toBeCloseTo(Math.log(3), 6);
    expect(Number.isNaN(per[1])).toBe(true);
    expect(() => crossEntropy(x, uploadTensor(ctx!, new Int32Array(3), [3]))).toThrow(
      /targets \[3\] do not match logits \[2,3\]/,
    );
    releaseTransients(ctx!);
  });
});
