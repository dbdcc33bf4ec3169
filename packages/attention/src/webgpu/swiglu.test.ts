import { backward } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { expectClose, gpuForTests, toGpu } from "@loop/test-support-gpu";
import { releaseTransients, uploadTensor } from "@loop/webgpu";
import { backwardGpu, swiglu } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { swiglu as cpuSwiglu } from "../index.js";

const ctx = await gpuForTests("webgpu swiglu");

describe.runIf(ctx)("webgpu swiglu matches @loop/attention's swiglu", () => {
  it("forward, ∂gate and ∂up, including large |gate|", async () => {
    const shape = [3, 7, 37];
    const gate = randn(shape, 1, { std: 3 });
    gate.data[0] = 90; // σ saturates: no overflow on either side
    gate.data[1] = -90;
    const up = randn(shape, 2);
    const dy = randn(shape, 3, { requiresGrad: false });
    const y = cpuSwiglu(gate, up);
    backward([y], [dy.data]);
    const gg = toGpu(ctx!, gate);
    const gu = toGpu(ctx!, up);
    const gy = swiglu(gg, gu);
    await expectClose(gy, y.data, "y", 1e-5);
    backwardGpu(gy, toGpu(ctx!, dy, false));
    await expectClose(gg.grad!, gate.grad!, "∂gate", 1e-5);
    await expectClose(gu.grad!, up.grad!, "∂up", 1e-5);
    gg.dispose();
    gu.dispose();
    releaseTransients(ctx!);
  });

  it("names the problem on bad shapes", () => {
    const a = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const b = uploadTensor(ctx!, new Float32Array(6), [3, 2]);
    expect(() => swiglu(a, b)).toThrow(/webgpu swiglu: gate \[2,3\] and up \[3,2\]/);
    releaseTransients(ctx!);
  });
});
