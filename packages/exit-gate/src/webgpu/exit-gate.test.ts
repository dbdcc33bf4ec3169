import { backward, intTensor, type Tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { expectClose, gpuForTests, toGpu, toGpuInt } from "@loop/test-support-gpu";
import { type GpuTensor, gpuBackendOps, releaseTransients, uploadTensor } from "@loop/webgpu";
import { backwardGpu } from "@loop/webgpu/internal";
import { describe, expect, it } from "vitest";
import { exitPdfOn, gateLogitsOn } from "../gate-on.js";
import {
  exitPdf as cpuExitPdf,
  gateLogits as cpuGateLogits,
  perStepCrossEntropy as cpuPerStepCE,
  stage1Loss as cpuStage1Loss,
  stage2Loss as cpuStage2Loss,
} from "../index.js";
import { perStepCeOn, stage1LossOn, stage2LossOn } from "../stage-losses-on.js";

const ctx = await gpuForTests("webgpu exit-gate ops");
// the exit gate's ops composed over the WebGPU kernels (gate-on.ts, stage-losses-on.ts)
const ops = ctx ? gpuBackendOps(ctx) : null;
const gateLogits = (xs: readonly GpuTensor[], w: GpuTensor, b: GpuTensor) =>
  gateLogitsOn(ops!, xs, w, b);
const exitPdf = (a: GpuTensor) => exitPdfOn(ops!, a);
const perStepCrossEntropy = (l: readonly GpuTensor[], t: GpuTensor) => perStepCeOn(ops!, l, t);

const R = 4;
const S = [2, 5]; // token shape; M = 10
const targets = intTensor([1, -100, 0, 6, 3, -100, 2, 5, 4, 0], S);

/** Per-step tensors [R] × shape with distinct seeds. */
const perStep = (shape: number[], seed: number, std = 1) =>
  Array.from({ length: R }, (_, r) => randn(shape, seed + r, { std }));

async function expectGrads(cpu: Tensor[], gpu: GpuTensor[], what: string) {
  for (let i = 0; i < cpu.length; i++)
    await expectClose(gpu[i]!.grad!, cpu[i]!.grad!, `∂${what}[${i}]`);
}

function done(leaves: GpuTensor[]) {
  for (const t of leaves) t.dispose();
  releaseTransients(ctx!);
}

describe.runIf(ctx)("webgpu exit-gate ops match @loop/exit-gate", () => {
  for (const [tokens, D] of [
    [S, 70], // D not a multiple of the 256-thread row reduction
    [[3, 100], 5], // M = 300 rows: ∂weight sums two chunks of rows
  ] as const) {
    it(`gateLogits [${tokens}, ${D}]: a, ∂readouts, ∂weight, ∂bias`, async () => {
      const xs = perStep([...tokens, D], 10);
      const w = randn([1, D], 1);
      const b = randn([1], 2);
      const g = randn([R, ...tokens], 3, { requiresGrad: false });
      const a = cpuGateLogits(xs, w, b);
      backward([a], [g.data]);
      const gxs = xs.map((x) => toGpu(ctx!, x));
      const [gw, gb] = [toGpu(ctx!, w), toGpu(ctx!, b)];
      const ga = gateLogits(gxs, gw, gb);
      expect(ga.shape).toEqual([R, ...tokens]);
      await expectClose(ga, a.data, "a");
      backwardGpu(ga, toGpu(ctx!, g, false));
      await expectGrads(xs, gxs, "readouts");
      await expectClose(gw.grad!, w.grad!, "∂weight");
      await expectClose(gb.grad!, b.grad!, "∂bias");
      done([...gxs, gw, gb]);
    });
  }

  it("exitPdf: p and ∂a, including saturated gates", async () => {
    const a = randn([R, ...S], 4, { std: 2 });
    a.data[0] = 40;
    a.data[1] = -40;
    a.data[10] = 25;
    const g = randn([R, ...S], 5, { requiresGrad: false });
    const p = cpuExitPdf(a);
    backward([p], [g.data]);
    const gaT = toGpu(ctx!, a);
    const gp = exitPdf(gaT);
    await expectClose(gp, p.data, "p");
    backwardGpu(gp, toGpu(ctx!, g, false));
    await expectClose(gaT.grad!, a.grad!, "∂a");
    done([gaT]);
  });

  it("perStepCrossEntropy: ℓ and every step's ∂logits, with ignored targets", async () => {
    const V = 7;
    const logits = perStep([...S, V], 20, 2);
    const g = randn([R, ...S], 6, { requiresGrad: false });
    const ce = cpuPerStepCE(logits, targets);
    backward([ce], [g.data]);
    const gl = logits.map((l) => toGpu(ctx!, l));
    const gce = perStepCrossEntropy(gl, toGpuInt(ctx!, targets));
    await expectClose(gce, ce.data, "ℓ");
    backwardGpu(gce, toGpu(ctx!, g, false));
    await expectGrads(logits, gl, "logits");
    done(gl);
  });

  it("every target ignored: NaN losses and zero gradients, as on the CPU", async () => {
    const none = toGpuInt(ctx!, intTensor(new Array(10).fill(-100), S));
    const ga = toGpu(ctx!, randn([R, ...S], 11));
    const gl = perStep([...S, 5], 12).map((l) => toGpu(ctx!, l));
    const l1 = stage1LossOn(ops!, ga, gl, none);
    const l2 = stage2LossOn(ops!, { logits: () => ga }, gl, gl, none);
    expect(Number.isNaN((await l1.read())[0])).toBe(true);
    expect(Number.isNaN((await l2.read())[0])).toBe(true);
    backwardGpu(l1, uploadTensor(ctx!, Float32Array.of(1), [1]));
    backwardGpu(l2, uploadTensor(ctx!, Float32Array.of(1), [1]));
    expect(await ga.grad!.read()).toEqual(new Float32Array(R * 10));
    for (const l of gl) expect(await l.grad!.read()).toEqual(new Float32Array(10 * 5));
    done([ga, ...gl]);
  });

  it("stage1Loss and stage2Loss through a gate: values and which parameters get gradients", async () => {
    const D = 12;
    const V = 9;
    const xs = perStep([...S, D], 30);
    const logits = perStep([...S, V], 40, 2);
    const w = randn([1, D], 13);
    const b = randn([1], 14);
    const cpuGate = { logits: (r: readonly Tensor[]) => cpuGateLogits(r, w, b) };
    const gxs = xs.map((x) => toGpu(ctx!, x));
    const gl = logits.map((l) => toGpu(ctx!, l));
    const [gw, gb] = [toGpu(ctx!, w), toGpu(ctx!, b)];
    const gpuGate = { logits: (r: readonly GpuTensor[]) => gateLogits(r, gw, gb) };
    const gt = toGpuInt(ctx!, targets);

    const L1 = cpuStage1Loss(cpuGate.logits(xs), logits, targets, { beta: 0.1 });
    backward([L1]);
    const gL1 = stage1LossOn(ops!, gpuGate.logits(gxs), gl, gt, { beta: 0.1 });
    await expectClose(gL1, L1.data, "L1");
    backwardGpu(gL1);
    await expectGrads(xs, gxs, "readouts (stage 1)");
    await expectGrads(logits, gl, "logits (stage 1)");
    await expectClose(gw.grad!, w.grad!, "∂weight (stage 1)");
    await expectClose(gb.grad!, b.grad!, "∂bias (stage 1)");

    for (const t of [...xs, ...logits, w, b]) t.grad = null;
    for (const t of [...gxs, ...gl, gw, gb]) {
      t.grad?.dispose();
      t.grad = null;
    }
    const L2 = cpuStage2Loss(cpuGate, xs, logits, targets, { k: 20, gamma: 0.01 });
    backward([L2]);
    const gL2 = stage2LossOn(ops!, gpuGate, gxs, gl, gt, { k: 20, gamma: 0.01 });
    await expectClose(gL2, L2.data, "L2");
    backwardGpu(gL2);
    await expectClose(gw.grad!, w.grad!, "∂weight (stage 2)");
    await expectClose(gb.grad!, b.grad!, "∂bias (stage 2)");
    for (const t of [...gxs, ...gl]) expect(t.grad).toBeNull();
    done([...gxs, ...gl, gw, gb]);
  });

  it("names the problem on bad shapes", () => {
    const a = uploadTensor(ctx!, new Float32Array(8), [4, 2]);
    const t = uploadTensor(ctx!, new Int32Array(2), [2]);
    const x = uploadTensor(ctx!, new Float32Array(6), [2, 3]);
    const w = uploadTensor(ctx!, new Float32Array(2), [1, 2]);
    const b = uploadTensor(ctx!, new Float32Array(1), [1]);
    expect(() => gateLogits([x], w, b)).toThrow(
      /gateLogits: weight has shape \[1,2\], expected \[1,3\]/,
    );
    expect(() => stage1LossOn(ops!, a, [x], t)).toThrow(
      /stage1Loss: logitsPerStep has 1 steps, expected R = 4/,
    );
    releaseTransients(ctx!);
  });
});
