import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LoopedModel } from "@loop/looped";
import { loadCheckpoint } from "@loop/looped/node";
import { describe, expect, it } from "vitest";
import { resolveTrainOptions } from "../options.js";
import { NonFiniteError } from "../trainer.js";
import { type RunOptions, runTraining } from "./run.js";
import { latestCheckpoint } from "./run-files.js";
import { cfg, task } from "./run-fixture.test-util.js";

const train = resolveTrainOptions({
  steps: 6,
  batchSize: 4,
  gradAccum: 2,
  warmupSteps: 2,
  checkpointEvery: 2,
  evalEvery: 3,
  seed: 7,
});
/** Train `model` in `dir` on the task with `train`, `more` on top. */
const trainIn = (dir: string, model: LoopedModel, more: Partial<RunOptions> = {}) =>
  runTraining({ runDir: dir, model, task, train, ...more });
const evaluate = () => ({ metric: "accuracy" as const, per_step: [0.5, 0.5], final: 0.5 });
const deterministic = (path: string) =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => {
      const { step, loss, lr, grad_norm, eval: ev } = JSON.parse(l);
      return { step, loss, lr, grad_norm, ev };
    });

describe("runTraining", () => {
  it("a resumed run reproduces the uninterrupted run exactly", async () => {
    const full = mkdtempSync(join(tmpdir(), "run-full-"));
    await trainIn(full, new LoopedModel(cfg, { seed: 1 }), {
      evaluate,
    });
    const cut = mkdtempSync(join(tmpdir(), "run-cut-"));
    // Interrupt after step 5 (the last checkpoint is step 4), then resume.
    await expect(
      trainIn(cut, new LoopedModel(cfg, { seed: 1 }), {
        evaluate,
        onStep: (m) => {
          if (m.step === 5) throw new Error("simulated crash");
        },
      }),
    ).rejects.toThrow(/simulated crash/);
    expect(latestCheckpoint(cut)).toMatch(/step-000004$/);
    await trainIn(cut, new LoopedModel(cfg, { seed: 99 }), {
      evaluate,
      resume: true,
    });
    const a = deterministic(join(full, "log.jsonl"));
    const b = deterministic(join(cut, "log.jsonl"));
    expect(a.map((x) => x.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(b).toEqual(a);
    const wa = loadCheckpoint(join(full, "final")).parameters();
    const wb = loadCheckpoint(join(cut, "final")).parameters();
    wa.forEach((p, i) => {
      expect(Array.from(wb[i]!.tensor.data)).toEqual(Array.from(p.tensor.data));
    });
  });

  it("stops on a non-finite loss, naming the step, and leaves the last good checkpoint intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "run-nan-"));
    const model = new LoopedModel(cfg, { seed: 2 });
    const every = resolveTrainOptions({ ...train, checkpointEvery: 1 });
    let err: unknown;
    try {
      await runTraining({
        runDir: dir,
        model,
        task,
        train: every,
        onStep: (m) => {
          if (m.step === 2) model.embeddings.data.fill(Number.NaN);
        },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NonFiniteError);
    expect((err as Error).message).toMatch(/non-finite loss \(NaN\) at step 3/);
    expect(latestCheckpoint(dir)).toMatch(/step-000002$/);
    const good = loadCheckpoint(join(dir, "checkpoints", "step-000002"));
    expect(good.embeddings.data.every(Number.isFinite)).toBe(true);
    expect(existsSync(join(dir, "final"))).toBe(false);
  });

  it("resume without a run or without a checkpoint is a clear error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "run-none-"));
    await expect(trainIn(dir, new LoopedModel(cfg), { resume: true })).rejects.toThrow(
      /nothing to resume in .*: it holds no run.json/,
    );
    const dir2 = mkdtempSync(join(tmpdir(), "run-none-"));
    await expect(
      trainIn(dir2, new LoopedModel(cfg, { seed: 2 }), {
        train: resolveTrainOptions({ ...train, checkpointEvery: 0 }),
        onStep: (m) => {
          if (m.step === 2) throw new Error("crash before any checkpoint");
        },
      }),
    ).rejects.toThrow(/crash/);
    await expect(trainIn(dir2, new LoopedModel(cfg), { resume: true })).rejects.toThrow(
      /resume: no checkpoint in/,
    );
  });
});
