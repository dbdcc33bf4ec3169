import { LoopedModel } from "@loop/looped";
import { resolveTrainOptions, Trainer } from "@loop/train";
import { describe, expect, it } from "vitest";
import { buildConfig, buildTask, DEFAULT_SETTINGS, taskFromRunJson } from "./settings.js";

describe("playground settings", () => {
  it("every backbone, gated or not, builds and takes a finite training step", () => {
    const task = buildTask({ name: "mano", maxOps: 2 });
    for (const [backbone, layers] of [
      ["mamba", 1],
      ["hybrid", 2],
      ["transformer", 1],
    ] as const) {
      for (const exitGate of [false, true]) {
        const cfg = buildConfig(
          { backbone, layers, loops: 2, dModel: 16, exitGate },
          task.vocabSize,
        );
        expect(cfg.exit_gate).toBe(exitGate);
        const model = new LoopedModel(cfg, { seed: 1 });
        const stage = exitGate ? "gate1" : "pretrain";
        const trainer = new Trainer(
          model,
          task,
          resolveTrainOptions({ steps: 1, batchSize: 2, stage }),
        );
        expect(Number.isFinite(trainer.trainStep().loss)).toBe(true);
      }
    }
  });

  it("the defaults are the default experiment's model and task", () => {
    const task = buildTask(DEFAULT_SETTINGS.task);
    expect(task.name).toBe("phop-a4-n32-p3-dense");
    const cfg = buildConfig(DEFAULT_SETTINGS.model, task.vocabSize);
    expect([cfg.n_layers, cfg.n_loops, cfg.d_model, cfg.backbone]).toEqual([1, 4, 32, "mamba"]);
  });

  it("a hybrid needs two layers", () => {
    expect(() =>
      buildConfig({ backbone: "hybrid", layers: 1, loops: 2, dModel: 16, exitGate: false }, 4),
    ).toThrow(/hybrid backbone needs N ≥ 2/);
  });

  it("reads the task of a looplm train run.json", () => {
    expect(
      taskFromRunJson({ task: { name: "phop", alphabet: 4, length: 16, hops: 2, dense: true } }),
    ).toEqual({ name: "phop", alphabet: 4, length: 16, hops: 2 });
    expect(taskFromRunJson({ task: { name: "mano", max_ops: 5 } })).toEqual({
      name: "mano",
      maxOps: 5,
    });
    expect(() => taskFromRunJson({ task: { name: "lm" } })).toThrow(/mano and phop runs.*"lm"/);
    expect(() => taskFromRunJson({})).toThrow(/no task section/);
    expect(() => taskFromRunJson({ task: { name: "phop", alphabet: "4" } })).toThrow(
      /task.alphabet must be an integer/,
    );
  });
});
