import { LoopedModel } from "@loop/looped";
import { pHop } from "@loop/tasks";
import { releaseScratch } from "@loop/tensor";
import { scratchBytes } from "@loop/tensor/internal";
import { resolveTrainOptions, Trainer } from "@loop/train";
import { describe, expect, it } from "vitest";
import {
  checkMemoryNeed,
  evaluationMemoryNeed,
  formatBytes,
  layerFloatsPerToken,
  needBytes,
  trainingMemoryNeed,
} from "./memory-need.js";
import { buildModelConfig, MODEL_DEFAULTS, type ModelFlags } from "./options/model.js";

const config = (m: Partial<ModelFlags> = {}, vocab = 10) =>
  buildModelConfig({ ...MODEL_DEFAULTS, dModel: 16, dState: 4, headdim: 8, chunk: 8, ...m }, vocab);
const cfg = config();
const evaluation = { count: 256, batchSize: 64 };

describe("the memory a setting needs", () => {
  it("counts 16 bytes a parameter, each layer application's activations, the logits", () => {
    const need = trainingMemoryNeed(cfg, { batchSize: 4, gradAccum: 1 }, 12);
    expect(need.weightBytes).toBe(16 * need.params);
    // every activation and its gradient, at every loop step
    const perToken = 2 * cfg.n_loops * layerFloatsPerToken(cfg, 0) + 2 * 10;
    expect(need.stepBytes).toBe(4 * 4 * 12 * perToken + 4);
    // with activation checkpointing: each loop step's output, and one loop step's activations
    const ck = trainingMemoryNeed(cfg, { batchSize: 4, checkpointing: true }, 12);
    const ckPerToken = cfg.n_loops * 16 + 2 * layerFloatsPerToken(cfg, 0) + 2 * 10;
    expect(ck.stepBytes).toBe(4 * 4 * 12 * ckPerToken + 4);
    // per layer: each layer application's output, and one layer's activations
    const layer = trainingMemoryNeed(cfg, { batchSize: 4, checkpointing: "layer" }, 12);
    const layerPerToken =
      cfg.n_loops * cfg.n_layers * 16 + 2 * layerFloatsPerToken(cfg, 0) + 2 * 10;
    expect(layer.stepBytes).toBe(4 * 4 * 12 * layerPerToken + 4);
    expect(need.evalBatchBytes).toBe(0);
  });

  it("grows with every flag that scales memory", () => {
    const base = { batchSize: 4, gradAccum: 2 };
    const bytes = (m: Partial<ModelFlags>, t = base, seqLen = 12, e = evaluation, vocab = 10) =>
      needBytes(trainingMemoryNeed(config(m, vocab), t, seqLen, e));
    const ref = bytes({});
    const bigger: [string, number][] = [
      ["--batch", bytes({}, { ...base, batchSize: 8 })],
      ["--accum", bytes({}, { ...base, gradAccum: 4 })],
      ["--layers", bytes({ layers: 2 })],
      ["--loops", bytes({ loops: 4 })],
      ["--d-model", bytes({ dModel: 32 })],
      ["sequence length", bytes({}, base, 24)],
      ["eval batch", bytes({}, base, 12, { ...evaluation, batchSize: 128 })],
      ["vocabulary", bytes({}, base, 12, evaluation, 20)],
    ];
    for (const [flag, b] of bigger) expect(b, flag).toBeGreaterThan(ref);
  });

  it("an evaluation's count sets how long it takes, not its memory: one batch is held", () => {
    // (its rows are made batch by batch as they are read, in training and in `looplm eval`)
    const small = { count: 64, batchSize: 64 };
    const huge = { count: 2147483647, batchSize: 64 };
    const train = { batchSize: 4 };
    expect(needBytes(trainingMemoryNeed(cfg, train, 12, huge))).toBe(
      needBytes(trainingMemoryNeed(cfg, train, 12, small)),
    );
    expect(needBytes(evaluationMemoryNeed(cfg, 12, huge))).toBe(
      needBytes(evaluationMemoryNeed(cfg, 12, small)),
    );
    expect(() => checkMemoryNeed(trainingMemoryNeed(cfg, train, 12, huge), 2 ** 30)).not.toThrow();
  });

  it("is a floor: one step's activations take at least the estimate, measured", () => {
    // The CPU's pooled scratch memory after one step holds every activation of the step (each
    // at least 1024 floats here: 64 rows of 10 tokens); the layers' difference is what 4 more
    // layer applications kept.
    const task = pHop({ alphabet: 3, length: 10, hops: 1 });
    const pooled = (layers: number) => {
      const c = config({ layers, loops: 1 }, task.vocabSize);
      const opts = resolveTrainOptions({ steps: 1, batchSize: 64, warmupSteps: 0 });
      const t = new Trainer(new LoopedModel(c, { seed: 1 }), task, opts);
      releaseScratch();
      t.trainStep();
      return scratchBytes();
    };
    const measured = pooled(8) - pooled(4);
    const c = config({ layers: 4, loops: 1 }, task.vocabSize);
    const estimate = (layers: number) =>
      trainingMemoryNeed({ ...c, n_layers: layers }, { batchSize: 64 }, 10).stepBytes;
    expect(measured).toBeGreaterThanOrEqual(estimate(8) - estimate(4));
  });

  it("refuses --layers 100000 of the tiny model on a 16 GiB machine, naming --batch and --layers", () => {
    const deep = config({ layers: 100_000 });
    expect(() =>
      checkMemoryNeed(trainingMemoryNeed(deep, { batchSize: 16 }, 16, evaluation), 16 * 2 ** 30),
    ).toThrow(
      /^training this setting needs at least \d+\.\d GiB of memory .*: lower --batch \(or --layers, --loops, the sequence length\) \(this machine has 16\.0 GiB\)$/,
    );
  });

  it("refuses a setting over the machine's memory, naming the amount and the flag", () => {
    const need = trainingMemoryNeed(cfg, { batchSize: 1000, gradAccum: 1 }, 12);
    const total = needBytes(need);
    expect(() => checkMemoryNeed(need, total)).not.toThrow();
    expect(() => checkMemoryNeed(need, total - 1)).toThrow(
      `training this setting needs at least ${formatBytes(total)} of memory`,
    );
    expect(() => checkMemoryNeed(need, 1024)).toThrow(
      /: lower --batch \(or --layers, --loops, the sequence length\) \(this machine has 1\.0 KiB\)$/,
    );
    // an evaluation batch no machine holds; `looplm eval` names its own flags
    const ev = evaluationMemoryNeed(cfg, 12, { count: 2147483647, batchSize: 2147483647 });
    expect(() =>
      checkMemoryNeed(ev, 2 ** 30, { count: "--count", evalBatch: "--batch-size" }),
    ).toThrow(
      /^evaluating this setting needs at least [\d.]+ TiB of memory \(.* for [\d,]+ parameters, [\d.]+ TiB for the evaluation of --count 2147483647 rows, 2147483647 at a time\): lower --batch-size \(or --layers, --loops, the sequence length\) \(this machine has 1\.0 GiB\)$/,
    );
  });

  it("writes sizes in binary units", () => {
    expect(formatBytes(512)).toBe("512 bytes");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(3 * 1024 ** 4)).toBe("3.0 TiB");
  });
});

describe("the flag a refusal names", () => {
  it("an evaluation batch of one row names the sequence length, not the batch size", () => {
    const need = evaluationMemoryNeed(cfg, 2_000_000_000, { count: 1, batchSize: 1 });
    expect(() =>
      checkMemoryNeed(need, 2 ** 30, { count: "--count", evalBatch: "--batch-size" }),
    ).toThrow(
      /: lower the sequence length \(--length or --seq-len; or --layers, --loops\) \(this machine has 1\.0 GiB\)$/,
    );
  });

  it("a training batch of one row names the sequence length, not --batch", () => {
    const need = trainingMemoryNeed(cfg, { batchSize: 1 }, 2_000_000_000);
    expect(() => checkMemoryNeed(need, 2 ** 30)).toThrow(
      /: lower the sequence length \(--length or --seq-len; or --layers, --loops\) \(this machine has/,
    );
  });
});
