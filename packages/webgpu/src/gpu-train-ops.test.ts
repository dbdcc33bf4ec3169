/**
 * The one optimiser (`AdamWCore`) and the one clipping rule (`clipGradients`) on the GPU's
 * TrainOps and autograd (gpuBackendOps) against the CPU's AdamW and clipping (the oracle) on
 * the same parameters and gradients, on Dawn + SwiftShader; skipped with one printed line where
 * no adapter exists.
 */
import {
  AdamW,
  AdamWCore,
  clipGradients,
  clipGradNorm as cpuClipGradNorm,
  gradNorm as cpuGradNorm,
  type NamedParameter,
  Rng,
  tensor,
} from "@loop/tensor";
import { expectClose, gpuForTests } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { gpuBackendOps } from "./gpu-backend-ops.js";
import { releaseTransients, uploadTensor } from "./gpu-tensor.js";
import type { GpuNamedParameter } from "./gpu-train-ops.js";

const ctx = await gpuForTests("webgpu optimiser");
const ops = ctx ? gpuBackendOps(ctx) : null!;
const gpuAdamW = (params: GpuNamedParameter[], opts: ConstructorParameters<typeof AdamW>[1]) =>
  new AdamWCore(ops, params, opts);
const gradNorm = (params: GpuNamedParameter[]) => clipGradients(ops, params, 0);
const clipGradNorm = (params: GpuNamedParameter[], maxNorm: number) =>
  clipGradients(ops, params, maxNorm);

/** The same parameters on both sides: [name, shape-size, decay, requiresGrad, lrScale]. */
const specs = [
  ["w", 300, true, true, undefined],
  ["big", 9000, true, true, undefined], // more than one sum-of-squares block (SQ_BLOCK)
  ["norm", 7, false, true, undefined],
  ["block", 9, true, true, 0.5],
  ["frozen", 5, true, false, undefined],
  ["unused", 4, true, true, undefined],
] as const;

function twins(seed: number): { cpu: NamedParameter[]; gpu: GpuNamedParameter[] } {
  const rng = new Rng(seed);
  const cpu: NamedParameter[] = [];
  const gpu: GpuNamedParameter[] = [];
  for (const [name, n, decay, req, lrScale] of specs) {
    const v = rng.fillNormal(new Float32Array(n));
    cpu.push({ name, tensor: tensor(v, [n], req), decay, lrScale });
    gpu.push({
      name,
      tensor: uploadTensor(ctx!, v, [n], { persistent: true, requiresGrad: req }),
      decay,
      lrScale,
    });
  }
  return { cpu, gpu };
}

/** Give both sides the same gradients (none for "unused"), scaled by `s`. */
function setGrads(cpu: NamedParameter[], gpu: GpuNamedParameter[], rng: Rng, s = 1): void {
  cpu.forEach((p, k) => {
    const gp = gpu[k]!.tensor;
    gp.grad?.dispose();
    gp.grad = null;
    p.tensor.grad = null;
    if (p.name === "unused") return;
    const g = rng.fillNormal(new Float32Array(p.tensor.size), 0, s);
    p.tensor.grad = g;
    gp.grad = uploadTensor(ctx!, g, gp.shape, { persistent: true });
  });
}

async function expectSameParams(cpu: NamedParameter[], gpu: GpuNamedParameter[], tol: number) {
  for (let k = 0; k < cpu.length; k++)
    await expectClose(await gpu[k]!.tensor.read(), cpu[k]!.tensor.data, cpu[k]!.name, tol);
}

describe.runIf(ctx)("AdamWCore on gpuTrainOps against @loop/tensor's AdamW", () => {
  it("takes the same steps (decay and lr factor per parameter, frozen and gradient-less parameters skipped)", async () => {
    const { cpu, gpu } = twins(1);
    const opts = { lr: 0.01, weightDecay: 0.1, beta2: 0.99 };
    const a = new AdamW(cpu, opts);
    const b = gpuAdamW(gpu, opts);
    const rng = new Rng(2);
    for (const lr of [0.01, 0.005, 0.02]) {
      setGrads(cpu, gpu, rng);
      a.step(lr);
      b.step(lr);
      await expectSameParams(cpu, gpu, 2e-6);
    }
    const sa = a.getState();
    const sb = await b.readState();
    expect(sb.step).toBe(3);
    expect(Object.keys(sb.m).sort()).toEqual(Object.keys(sa.m).sort());
    for (const name of Object.keys(sa.m)) {
      await expectClose(sb.m[name]!, sa.m[name]!, `m ${name}`, 1e-6);
      await expectClose(sb.v[name]!, sa.v[name]!, `v ${name}`, 1e-6);
    }
    // Resume the GPU optimiser from the CPU one's state: the next steps agree again.
    const c = gpuAdamW(gpu, opts);
    c.setState(sa);
    setGrads(cpu, gpu, rng);
    a.step();
    c.step();
    await expectSameParams(cpu, gpu, 2e-6);
    b.zeroGrad();
    expect(gpu.every((p) => p.tensor.grad === null)).toBe(true);
    expect(() => c.setState({ step: 1, m: { nope: new Float32Array(1) }, v: {} })).toThrow(
      /unknown parameter "nope"/,
    );
    expect(() => gpuAdamW(gpu, { beta1: 1 })).toThrow(/beta1 must be in \[0, 1\), got 1/);
    b.dispose();
    c.dispose();
    for (const p of gpu) p.tensor.dispose();
    releaseTransients(ctx!);
  });
});

describe.runIf(ctx)("clipGradients on the device against the CPU gradNorm and clipGradNorm", () => {
  for (const [what, scale, maxNorm] of [
    ["clips a norm above maxNorm", 3, 1],
    ["leaves a norm below maxNorm", 0.01, 1],
  ] as const)
    it(what, async () => {
      const { cpu, gpu } = twins(3);
      setGrads(cpu, gpu, new Rng(4), scale);
      expect((await gradNorm(gpu).read())[0]).toBeCloseTo(cpuGradNorm(cpu), 4);
      const want = cpuClipGradNorm(cpu, maxNorm);
      const got = (await clipGradNorm(gpu, maxNorm).read())[0]!;
      expect(Math.abs(got - want) / want).toBeLessThan(1e-5);
      for (let k = 0; k < cpu.length; k++) {
        const g = await ops.readGrad(gpu[k]!.tensor);
        // (a frozen parameter has no gradient to read, whatever its block holds: AutogradOps)
        const none = cpu[k]!.tensor.grad === null || !cpu[k]!.tensor.requiresGrad;
        expect(g === null, cpu[k]!.name).toBe(none);
        if (g) await expectClose(g, cpu[k]!.tensor.grad!, `grad ${cpu[k]!.name}`, 1e-5);
      }
      for (const p of gpu) p.tensor.dispose();
      releaseTransients(ctx!);
    });

  it("AdamW after a clipping steps with the clipped gradients (the clipping applied as it reads them)", async () => {
    const { cpu, gpu } = twins(7);
    const opts = { lr: 0.01, weightDecay: 0.1 };
    const a = new AdamW(cpu, opts);
    const b = gpuAdamW(gpu, opts);
    setGrads(cpu, gpu, new Rng(8), 3);
    cpuClipGradNorm(cpu, 1);
    clipGradNorm(gpu, 1);
    a.step();
    b.step();
    await expectSameParams(cpu, gpu, 2e-6);
    b.dispose();
    for (const p of gpu) p.tensor.dispose();
    releaseTransients(ctx!);
  });

  it("reports a non-finite norm and scales nothing then; rejects bad input", async () => {
    const { cpu, gpu } = twins(5);
    setGrads(cpu, gpu, new Rng(6));
    const before = await gpu[0]!.tensor.grad!.read();
    const g1 = gpu[1]!.tensor.grad!;
    const bad = await g1.read();
    bad[2] = Number.POSITIVE_INFINITY;
    g1.write(bad);
    expect((await clipGradNorm(gpu, 1).read())[0]).toBe(Number.POSITIVE_INFINITY);
    expect(await ops.readGrad(gpu[0]!.tensor)).toEqual(before);
    expect(() => clipGradNorm(gpu, -1)).toThrow(/maxNorm must be ≥ 0 \(0: no clipping\), got -1/);
    // no gradient at all: the norm is 0
    expect(await gradNorm([]).read()).toEqual(Float32Array.of(0));
    for (const p of gpu) p.tensor.dispose();
    releaseTransients(ctx!);
  });
});
