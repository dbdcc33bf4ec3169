/**
 * The WebGPU kernels of the generic ops against the independent PyTorch reference
 * (testdata/golden/kernels: rmsnorm, cross-entropy, embedding, adamw; made by tools/golden),
 * forward and every input gradient, within docs/formats.md's tolerance.
 */

import { AdamWCore } from "@loop/tensor";
import { expectGolden, loadKernelCase } from "@loop/test-support";
import {
  expectGpuGolden,
  expectGpuGrads,
  gpuForTests,
  gpuInts,
  gpuTensors,
} from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { gpuBackendOps } from "../gpu-backend-ops.js";
import { releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { meanCrossEntropy } from "./cross-entropy.test-util.js";
import { embedding } from "./embedding.js";
import { rmsnorm } from "./rmsnorm.js";

const crossEntropy = meanCrossEntropy;

const ctx = await gpuForTests("webgpu golden kernels (tensor ops)");

describe.runIf(ctx)("golden kernels, webgpu: rmsnorm, cross-entropy, embedding, adamw", () => {
  it("rmsnorm matches the reference, forward and gradients", async () => {
    const c = loadKernelCase("rmsnorm");
    const t = gpuTensors(ctx!, c, ["x", "weight"], ["x", "weight"]);
    const y = rmsnorm(t.x!, t.weight!, c.spec.settings.eps as number);
    await expectGpuGolden("y", y, c, "y", "forward");
    await expectGpuGrads(ctx!, c, y, t, ["x", "weight"]);
    releaseTransients(ctx!);
  });

  it("cross-entropy (ceRows, then maskedMean) matches the reference, loss and gradient", async () => {
    const c = loadKernelCase("cross-entropy");
    const t = gpuTensors(ctx!, c, ["logits"], ["logits"]);
    const loss = crossEntropy(t.logits!, gpuInts(ctx!, c, "targets"));
    await expectGpuGolden("y", loss, c, "y", "forward");
    await expectGpuGrads(ctx!, c, loss, t, ["logits"]);
    releaseTransients(ctx!);
  });

  it("embedding matches the reference, forward and gradient", async () => {
    const c = loadKernelCase("embedding");
    const t = gpuTensors(ctx!, c, ["weight"], ["weight"]);
    const y = embedding(gpuInts(ctx!, c, "ids"), t.weight!);
    await expectGpuGolden("y", y, c, "y", "forward");
    await expectGpuGrads(ctx!, c, y, t, ["weight"]);
    releaseTransients(ctx!);
  });

  it("AdamWCore on gpuBackendOps takes the reference's steps, parameters and moments", async () => {
    const c = loadKernelCase("adamw");
    const s = c.spec.settings as Record<string, number> & { decay: Record<string, boolean> };
    const names = Object.keys(s.decay);
    const params = names.map((name) => ({
      name,
      tensor: uploadTensor(ctx!, c.copy(name), c.get(name).shape, {
        persistent: true,
        requiresGrad: true,
      }),
      decay: s.decay[name]!,
    }));
    const opt = new AdamWCore(gpuBackendOps(ctx!), params, {
      lr: s.lr,
      beta1: s.beta1,
      beta2: s.beta2,
      eps: s.eps,
      weightDecay: s.weight_decay,
    });
    for (let step = 1; step <= s.steps!; step++) {
      for (const p of params) {
        p.tensor.grad?.dispose();
        const g = `g.${p.name}.step${step}`;
        p.tensor.grad = uploadTensor(ctx!, c.copy(g), c.get(g).shape, { persistent: true });
      }
      opt.step();
      for (const p of params)
        await expectGpuGolden(
          `${p.name}.step${step}`,
          p.tensor,
          c,
          `${p.name}.step${step}`,
          "forward",
        );
    }
    const state = await opt.readState();
    expect(state.step).toBe(s.steps);
    for (const n of names) {
      expectGolden(`m.${n}`, state.m[n]!, c.get(`m.${n}`).data, "forward");
      expectGolden(`v.${n}`, state.v[n]!, c.get(`v.${n}`).data, "forward");
    }
    for (const p of params) p.tensor.dispose();
    releaseTransients(ctx!);
  });
});
