/**
 * Mixed-precision training on webgpu (`precision: "mixed"`: f16 GEMM operands, f32 accumulation,
 * f32 master weights and AdamW state, dynamic loss scale) follows the fp32 run: a tiny Mamba-2
 * and a tiny Transformer train 30 steps from the same weights on the same batches in both
 * precisions, and every step's loss agrees within 1 % (relative).
 *
 * Why 1 %: rounding an operand to f16 has a relative error of at most 2⁻¹¹ ≈ 4.9e-4, so each
 * product moves by about 1e-3 relative, and so does the loss through a layer, two loops and the
 * softmax; the two runs then take slightly different updates and the difference grows with the
 * steps. Measured on SwiftShader (packed storage) over 30 steps: at most 2.0e-3 (Mamba-2) and
 * 2.6e-3 (Transformer). 1 % keeps a margin of about four over that and still fails a run whose
 * gradients are lost (f16 underflow without the loss scale) or wrong, which drifts by far more.
 *
 * Which f16 storage runs: native on an adapter with shader-f16, else two f16 per u32 word —
 * SwiftShader lacks shader-f16, so there the packed form is what this test exercises (the test's
 * name says which ran).
 *
 * And a mixed-precision run interrupted after its step-2 checkpoint and resumed logs the
 * uninterrupted run's losses, with the loss scale's count of clean steps carried through
 * trainer.json.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gpuForTests } from "@loop/test-support";
import { deviceTraining, resolveTrainOptions, Trainer, type TrainOptions } from "@loop/train";
import { gpuBackendOps, setGpuPrecision } from "@loop/webgpu";
import { hasFeature } from "@loop/webgpu/internal";
import { createNodeGpuContext } from "@loop/webgpu/node";
import { describe, expect, it } from "vitest";
import { deviceEngine } from "./device-engine.js";
import { BACKBONES, CHECKPOINTED, task, tinyModel, trainOnEngine } from "./gpu-tiny.test-util.js";

const ctx = await gpuForTests("webgpu mixed-precision training", createNodeGpuContext);
const storage = ctx && hasFeature(ctx, "shader-f16") ? "native f16" : "packed f16 (no shader-f16)";

async function curve(extra: Record<string, unknown>, train: Partial<TrainOptions>) {
  const opts = resolveTrainOptions({
    steps: 30,
    batchSize: 2,
    lr: 1e-2,
    warmupSteps: 5,
    seed: 1,
    ...train,
  });
  const model = tinyModel(extra);
  // (the device's GEMMs at the run's precision, as ComputeBackend.opsAt sets them)
  setGpuPrecision(ctx!, opts.precision === "mixed" ? "mixed" : "fp32");
  const engine = deviceEngine(deviceTraining(model, gpuBackendOps(ctx!), opts), opts);
  const trainer = new Trainer(model, task, opts, engine);
  const losses: number[] = [];
  try {
    while (!trainer.done) losses.push((await trainer.nextStep()).loss);
  } finally {
    engine.dispose();
  }
  const scale = "lossScale" in engine ? (engine.lossScale as { scale: number }).scale : null;
  return { losses, scale };
}

const SLOW = { timeout: 900_000 };

describe.runIf(ctx)(
  `mixed precision on webgpu follows fp32 within 1 % (30 steps, ${storage})`,
  () => {
    for (const [name, extra] of Object.entries({
      mamba: BACKBONES.mamba,
      transformer: BACKBONES.transformer,
    }))
      it(name, SLOW, async () => {
        const fp32 = await curve(extra, {});
        const mixed = await curve(extra, { precision: "mixed" });
        let worst = 0;
        mixed.losses.forEach((m, i) => {
          const f = fp32.losses[i]!;
          const rel = Math.abs(m - f) / Math.abs(f);
          worst = Math.max(worst, rel);
          expect(rel, `step ${i + 1}: mixed ${m} fp32 ${f}`).toBeLessThan(0.01);
        });
        // (printed for the record: how close the curves came)
        process.stdout.write(
          `${name}: worst relative loss difference ${worst.toExponential(2)}, final scale ${mixed.scale}\n`,
        );
        // rounding did happen (the curves are not the same bits), under a loss scale
        expect(mixed.losses).not.toEqual(fp32.losses);
        expect(mixed.scale).toBe(2 ** 14);
      });

    it(
      "a resumed mixed-precision run keeps its loss scale and reproduces the uninterrupted run",
      SLOW,
      async () => {
        const train = resolveTrainOptions({ ...CHECKPOINTED, precision: "mixed" });
        const run = (runDir: string, extra: { resume?: boolean; crashAt?: number }) => {
          const model = tinyModel(BACKBONES.mamba);
          setGpuPrecision(ctx!, "mixed");
          const dev = deviceTraining(model, gpuBackendOps(ctx!), train);
          return trainOnEngine(runDir, model, deviceEngine(dev, train), train, extra);
        };
        const trainerJson = (dir: string, step: number) =>
          JSON.parse(
            readFileSync(join(dir, "checkpoints", `step-00000${step}`, "trainer.json"), "utf8"),
          );
        const losses = (dir: string) =>
          readFileSync(join(dir, "log.jsonl"), "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l).loss);
        const full = mkdtempSync(join(tmpdir(), "gpu-mixed-full-"));
        await run(full, {});
        const cut = mkdtempSync(join(tmpdir(), "gpu-mixed-cut-"));
        await expect(run(cut, { crashAt: 3 })).rejects.toThrow(/simulated crash/);
        expect(trainerJson(cut, 2).loss_scale).toEqual({ scale: 2 ** 14, good: 2 });
        await run(cut, { resume: true });
        expect(losses(cut)).toEqual(losses(full));
        // the clean steps counted on from the checkpoint's 2, as in the uninterrupted run
        expect(trainerJson(cut, 4).loss_scale).toEqual({ scale: 2 ** 14, good: 4 });
        expect(trainerJson(full, 4).loss_scale).toEqual({ scale: 2 ** 14, good: 4 });
      },
    );
  },
);
