import { backward, noGrad, parameter, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { expectClose, gpuForTests, toGpu } from "@loop/test-support-gpu";
import { type GpuTensor, releaseTransients, uploadTensor } from "@loop/webgpu";
import { backwardGpu, mixtureLogits, mixtureLogProbs } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import {
  exitPdf as cpuExitPdf,
  mixtureLogits as cpuMixtureLogits,
  mixtureLogProbs as cpuMixtureLogProbs,
} from "../index.js";

const ctx = await gpuForTests("webgpu mixture");

const R = 3;
const S = [2, 5];
const V = 300; // more than one 256-thread stride per row

/** A pdf [R, ...S] (rows of an exit distribution) as a trainable leaf, one entry exactly 0. */
function pdfLeaf(): Tensor {
  const p = noGrad(() => cpuExitPdf(randn([R, ...S], 5, { std: 1.5 }))).data.slice();
  // Token 3 never exits at step 1: its mass moves to step 2.
  p[10 + 3]! += p[3]!;
  p[3] = 0;
  return parameter(p, [R, ...S]);
}

describe.runIf(ctx)("webgpu mixtures match @loop/exit-gate", () => {
  for (const [name, cpu, gpu] of [
    ["mixtureLogits", cpuMixtureLogits, mixtureLogits],
    ["mixtureLogProbs", cpuMixtureLogProbs, mixtureLogProbs],
  ] as const) {
    it(`${name}: y, every step's ∂logits and ∂pdf (a zero pdf entry)`, async () => {
      const logits = Array.from({ length: R }, (_, r) => randn([...S, V], 20 + r, { std: 2 }));
      const pdf = pdfLeaf();
      const g = randn([...S, V], 9, { requiresGrad: false });
      const y = cpu(logits, pdf);
      backward([y], [g.data]);
      const gl = logits.map((l) => toGpu(ctx!, l));
      const gp = toGpu(ctx!, pdf);
      const gy = gpu(gl, gp);
      await expectClose(gy, y.data, "y");
      backwardGpu(gy, toGpu(ctx!, g, false));
      for (let r = 0; r < R; r++)
        await expectClose(gl[r]!.grad!, logits[r]!.grad!, `∂logits[${r}]`);
      await expectClose(gp.grad!, pdf.grad!, "∂pdf");
      for (const t of [...gl, gp] as GpuTensor[]) t.dispose();
      releaseTransients(ctx!);
    });
  }

  it("names the problem on bad shapes", () => {
    const x = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const p = uploadTensor(ctx!, new Float32Array(3), [1, 3]);
    expect(() => mixtureLogits([x], p)).toThrow(
      /webgpu mixtureLogits: pdf has shape \[1,3\], expected \[1,2\]/,
    );
    releaseTransients(ctx!);
  });
});
