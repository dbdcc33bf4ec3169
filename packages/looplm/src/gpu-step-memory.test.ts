/**
 * The webgpu training step's device memory, counted by the context (`GpuContext.memory()`: the
 * bytes of the pool's buffers handed out, high-water mark per step): freeing activations and
 * intermediate gradients as the backward consumes them lowers the peak and changes no number;
 * activation checkpointing (`--checkpointing`) lowers it further and gives the same losses and
 * gradients within float32 rounding. Dawn + SwiftShader, tiny shapes; skipped with one printed
 * line where no WebGPU adapter exists, a failure under CI.
 */
import { gpuForTests } from "@loop/test-support";
import { deviceStepEngine, deviceTraining, resolveTrainOptions } from "@loop/train";
import { gpuBackendOps, setGpuPrecision } from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";
import { describe, expect, it } from "vitest";
import { BACKBONES, task, tinyModel } from "./gpu-tiny.test-util.js";

const ctx = await gpuForTests("webgpu step memory", createNodeGpuContext);
const SLOW = { timeout: 600_000 };

/** Two steps on the same batch: each step's losses, norm, peak bytes, and the last gradients. */
async function twoSteps(
  extra: Record<string, unknown>,
  opts: { release: boolean; checkpointing: boolean; hints?: boolean },
) {
  const model = tinyModel({ n_loops: 4, ...extra });
  const o = resolveTrainOptions({
    steps: 2,
    batchSize: 4,
    lr: 1e-2,
    seed: 1,
    checkpointing: opts.checkpointing,
  });
  const all = gpuBackendOps(ctx!, { releaseInBackward: opts.release });
  // without the forward's "done" hints every activation stays until the backward
  const ops = opts.hints === false ? { ...all, done: undefined } : all;
  const dev = deviceTraining(model, ops, o);
  const engine = deviceStepEngine(dev, o);
  const { batch } = task.trainBatch(task.startCursor(1), o.batchSize);
  try {
    const steps = [];
    for (let s = 0; s < 2; s++) {
      ctx!.resetPeak();
      const r = await engine.step([batch], 1e-2);
      steps.push({ ...r, peak: ctx!.memory().peakBytes });
    }
    const grads = [];
    for (const p of dev.parameters) grads.push(Array.from((await ops.readGrad(p.tensor)) ?? []));
    return { steps, grads };
  } finally {
    engine.dispose();
  }
}

function expectClose(a: number[][], b: number[][], what: string): void {
  expect(a.length).toBe(b.length);
  a.forEach((x, i) => {
    const y = b[i]!;
    expect(x.length, `${what} ${i}`).toBe(y.length);
    x.forEach((v, j) => {
      expect(Math.abs(v - y[j]!), `${what} ${i}[${j}]: ${v} vs ${y[j]}`).toBeLessThan(
        1e-5 * (1 + Math.abs(y[j]!)),
      );
    });
  });
}

describe.runIf(ctx)("webgpu training step memory", () => {
  for (const [name, extra] of Object.entries({
    mamba: BACKBONES.mamba,
    transformer: BACKBONES.transformer,
  })) {
    it(
      `${name}: mixed precision keeps the projections' inputs in f16 only: lower peak, same bits`,
      SLOW,
      async () => {
        // the norms' (and SwiGLU's) outputs, read by projections only, are freed once the forward
        // is done with them: the backward reads the f16 copies the projections made anyway
        setGpuPrecision(ctx!, "mixed");
        try {
          const f32Kept = await twoSteps(extra, {
            release: true,
            checkpointing: false,
            hints: false,
          });
          const f16Only = await twoSteps(extra, { release: true, checkpointing: false });
          expect(f16Only.steps.map((s) => [s.loss, s.gradNorm])).toEqual(
            f32Kept.steps.map((s) => [s.loss, s.gradNorm]),
          );
          expect(f16Only.grads).toEqual(f32Kept.grads);
          console.log(
            `${name} mixed: peak ${f32Kept.steps[1]!.peak} → ${f16Only.steps[1]!.peak} bytes`,
          );
          expect(f16Only.steps[1]!.peak).toBeLessThan(f32Kept.steps[1]!.peak);
        } finally {
          setGpuPrecision(ctx!, "fp32");
        }
      },
    );

    it(`${name}: freeing during the backward lowers the peak, same bits`, SLOW, async () => {
      const kept = await twoSteps(extra, { release: false, checkpointing: false });
      const freed = await twoSteps(extra, { release: true, checkpointing: false });
      expect(freed.steps.map((s) => [s.loss, s.gradNorm])).toEqual(
        kept.steps.map((s) => [s.loss, s.gradNorm]),
      );
      expect(freed.grads).toEqual(kept.grads);
      // the steady step (the second: the first also makes the gradients and the moments)
      expect(freed.steps[1]!.peak).toBeLessThan(kept.steps[1]!.peak);
    });

    it(
      `${name}: activation checkpointing, same numbers within rounding, lower peak`,
      SLOW,
      async () => {
        const plain = await twoSteps(extra, { release: true, checkpointing: false });
        const ckpt = await twoSteps(extra, { release: true, checkpointing: true });
        expectClose(
          ckpt.steps.map((s) => [s.loss, s.gradNorm]),
          plain.steps.map((s) => [s.loss, s.gradNorm]),
          "loss, norm",
        );
        expectClose(ckpt.grads, plain.grads, "gradient");
        expect(ckpt.steps[1]!.peak).toBeLessThan(plain.steps[1]!.peak);
      },
    );
  }
});
