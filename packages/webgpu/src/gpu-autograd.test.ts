/**
 * Autograd on the WebGPU backend (gpuBackendOps: @loop/tensor's deviceAutograd over the GPU
 * tape) against the CPU's on the same small model: the backward seeded with a weight, gradients
 * summed over calls and dropped by zeroGrads, frozen leaves, recording off, clipping as read
 * back, and activation checkpointing — the same gradients with the walks freeing as they go or
 * not (`releaseInBackward`). Dawn + SwiftShader; skipped with one printed line where no adapter
 * exists.
 */
import {
  cpuTensorOps as cpu,
  backward as cpuBackward,
  IGNORE_INDEX,
  type IntTensor,
  intTensor,
  type Tensor,
  type TensorOps,
  tensor,
} from "@loop/tensor";
import { expectClose, gpuForTests, randomData } from "@loop/test-support-gpu";
import { describe, expect, it } from "vitest";
import { gpuBackendOps } from "./gpu-backend-ops.js";
import { type GpuTensor, releaseTransients, uploadTensor } from "./gpu-tensor.js";

const ctx = await gpuForTests("webgpu autograd");

const [N, D, V] = [6, 8, 11];
const xData = randomData([N, D], 1);
const wData = randomData([V, D], 2, -0.5, 0.5);
const hData = randomData([D, D], 3, -0.5, 0.5);
const targets = Int32Array.from({ length: N }, (_, i) => (i === 2 ? IGNORE_INDEX : (i * 5) % V));

/** The mean cross-entropy of sigmoid(x·hᵀ)·wᵀ: kernels only, as the model composes them. */
function lossOn<T, I>(
  o: Pick<TensorOps<T, I>, "linear" | "unary" | "ceRows" | "maskedMean">,
  x: T,
  h: T,
  w: T,
  t: I,
  wrap: (f: (x: T) => T, x: T) => T = (f, x) => f(x),
): T {
  const a = wrap((u) => o.unary("sigmoid", o.linear(u, h)), x);
  return o.maskedMean(o.ceRows(o.linear(a, w), t), t);
}

/** The CPU's gradients of w and h, the loss's seeded with `weight`. */
function cpuGrads(weight: number): { w: Float32Array; h: Float32Array } {
  const w = tensor(wData.slice(), [V, D], true);
  const h = tensor(hData.slice(), [D, D], true);
  const loss = lossOn<Tensor, IntTensor>(
    cpu,
    tensor(xData.slice(), [N, D]),
    h,
    w,
    intTensor(targets, [N]),
  );
  cpuBackward([loss], [Float32Array.of(weight)]);
  return { w: w.grad!, h: h.grad! };
}

function gpuModel(ops: ReturnType<typeof gpuBackendOps>) {
  const w = ops.upload(wData, [V, D], { persistent: true, requiresGrad: true });
  const h = ops.upload(hData, [D, D], { persistent: true, requiresGrad: true });
  const x = ops.upload(xData, [N, D]);
  const t = ops.uploadInt(targets, [N]);
  return { w, h, x, t };
}

describe.runIf(ctx)("webgpu autograd (deviceAutograd over the GPU tape)", () => {
  it("backward seeds the loss's weight, sums over calls, zeroGrads drops; frozen leaves get none", async () => {
    const ops = gpuBackendOps(ctx!);
    const { w, h, x, t } = gpuModel(ops);
    const want = cpuGrads(0.5);
    ops.backward(lossOn(ops, x, h, w, t), 0.5);
    expect(ops.hasGrad(w) && ops.hasGrad(h)).toBe(true);
    await expectClose((await ops.readGrad(w))!, want.w, "∂w");
    await expectClose((await ops.readGrad(h))!, want.h, "∂h");
    ops.backward(lossOn(ops, x, h, w, t), 0.5);
    await expectClose((await ops.readGrad(w))!, cpuGrads(1).w, "∂w summed over two calls");
    ops.zeroGrads([w, h]);
    expect(ops.hasGrad(w) || ops.hasGrad(h)).toBe(false);
    expect(await ops.readGrad(w)).toBeNull();
    ops.setTrainable(h, false);
    ops.backward(lossOn(ops, x, h, w, t), 0.5);
    expect(ops.hasGrad(h)).toBe(false);
    await expectClose((await ops.readGrad(w))!, want.w, "∂w with h frozen");
    for (const p of [w, h]) p.dispose();
    releaseTransients(ctx!);
  });

  it("records nothing under noGrad; names a loss it cannot walk back from", () => {
    const ops = gpuBackendOps(ctx!);
    const { w, h, x, t } = gpuModel(ops);
    const loss = ops.noGrad(() => lossOn(ops, x, h, w, t));
    expect(loss.requiresGrad).toBe(false);
    expect(() => ops.backward(loss, 1)).toThrow(
      /webgpu backward: the loss records no gradient path/,
    );
    const rows = ops.ceRows(ops.linear(x, w), t);
    expect(() => ops.backward(rows, 1)).toThrow(/webgpu backward: the loss has shape \[6\]/);
    expect(() => ops.clipGrads([w], rows, 0)).toThrow(/maxNorm must be > 0, got 0/);
    for (const p of [w, h]) p.dispose();
    releaseTransients(ctx!);
  });

  it("clipGrads scales the gradients as they are next read (scaleGrads after it too)", async () => {
    const ops = gpuBackendOps(ctx!);
    const { w, h, x, t } = gpuModel(ops);
    ops.backward(lossOn(ops, x, h, w, t), 1);
    const norm = ops.gradNorm([w, h]);
    const n = (await norm.read())[0]!;
    const gw = (await ops.readGrad(w))!;
    ops.clipGrads([w, h], norm, n / 2);
    const clipped = (await ops.readGrad(w))!;
    const s = n / 2 / (n + 1e-6);
    await expectClose(
      clipped,
      gw.map((v) => v * s),
      "clipped ∂w",
    );
    // the loss-scale unscaling reads the gradients through autograd too (clipping applied first)
    ops.clipGrads([w, h], norm, n / 2);
    ops.scaleGrads!([w, h], 0.5);
    await expectClose(
      (await ops.readGrad(w))!,
      gw.map((v) => v * s * s * 0.5),
      "∂w clipped again, then scaled",
    );
    for (const p of [w, h]) p.dispose();
    releaseTransients(ctx!);
  });

  for (const release of [true, false])
    it(`checkpoint recomputes its call in the backward: the same gradients (releaseInBackward ${release})`, async () => {
      const ops = gpuBackendOps(ctx!, { releaseInBackward: release });
      const { w, h, x, t } = gpuModel(ops);
      const want = cpuGrads(1);
      const checkpointed = (f: (u: GpuTensor) => GpuTensor, u: GpuTensor) =>
        ops.checkpoint!(f, u, [h]);
      // x trains too here, so the walk ends at the checkpoint's stand-in and hands ∂x on
      const xl = uploadTensor(ctx!, xData, [N, D], { persistent: true, requiresGrad: true });
      ops.backward(lossOn(ops, xl, h, w, t, checkpointed), 1);
      await expectClose((await ops.readGrad(w))!, want.w, "∂w through a checkpoint");
      await expectClose((await ops.readGrad(h))!, want.h, "∂h inside the checkpoint");
      ops.zeroGrads([w, h, xl]);
      ops.backward(lossOn(ops, xl, h, w, t), 1);
      const plain = (await ops.readGrad(xl))!;
      ops.zeroGrads([w, h, xl]);
      ops.backward(lossOn(ops, xl, h, w, t, checkpointed), 1);
      expect(await ops.readGrad(xl)).toEqual(plain);
      for (const p of [w, h, x, xl]) p.dispose();
      releaseTransients(ctx!);
    });
});
