/**
 * The Trainer and `runTraining` with a pipelined engine (one step in flight), on the CPU's
 * TrainOps given a device-style guard (`guardFinite`, and an `adamw` that honours it): the
 * engine queues step k+1 before step k's result is awaited, every step is still logged in
 * order with the unpipelined run's numbers, nothing is in flight at a checkpoint, an
 * evaluation or the end, and an interrupt finishes and logs the step in flight before its
 * checkpoint; the resumed run reproduces the uninterrupted one. (The GPU's own check is
 * looplm's gpu-step-overlap.test.ts.)
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoopedModel } from "@loop/looped";
import { cpuTrainOps, type IntTensor, type StepOps, type Tensor } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { type DeviceTraining, deviceStepEngine } from "../device-step-engine.js";
import { freezeForStage, stageLoss } from "../objective.js";
import { resolveTrainOptions, type TrainOptions } from "../options.js";
import type { StepEngine } from "../step-engine.js";
import { Trainer } from "../trainer.js";
import { RunInterrupted, type RunOptions, runTraining } from "./run.js";
import { fresh, task } from "./run-fixture.test-util.js";

const guardedOps: StepOps<Tensor, IntTensor> = {
  ...cpuTrainOps,
  guardFinite: (values, guard) => {
    if (values.data.some((v) => !Number.isFinite(v))) guard.data[0] = 0;
  },
  adamw: (p, m, v, c, guard) => {
    if (guard?.data[0] !== 0) cpuTrainOps.adamw(p, m, v, c);
  },
};

/** An engine on `model` itself; `log` records each step's start ("q k") and result ("r k"). */
function engineOn(model: LoopedModel, o: TrainOptions, pipelined: boolean, log: string[]) {
  freezeForStage(model, o.stage);
  const dev: DeviceTraining<Tensor, IntTensor> = {
    name: "cpu (guarded)",
    ops: pipelined ? guardedOps : cpuTrainOps,
    parameters: model.parameters(),
    stageLoss: (t, y, s) => stageLoss(model, t, y, o, s ? s.data : null),
    pullWeights: async () => {},
    pushWeights: () => {},
  };
  const engine = deviceStepEngine(dev, o);
  let k = 0;
  const step = engine.step;
  const wrapped: StepEngine = {
    name: engine.name,
    pipelined: engine.pipelined,
    pull: () => engine.pull(),
    push: (s) => engine.push(s),
    step: (b, lr) => {
      const n = ++k;
      log.push(`q ${n}`);
      return step(b, lr).then((r) => {
        log.push(`r ${n}`);
        return r;
      });
    },
  };
  return wrapped;
}

const o = resolveTrainOptions({
  steps: 6,
  batchSize: 4,
  warmupSteps: 2,
  checkpointEvery: 3,
  evalEvery: 0,
  lr: 1e-2,
  seed: 7,
});

/** `runTraining` in `dir` of a fresh model (seed `seed`) on `engineOn`, logging into `log`. */
function trainIn(
  dir: string,
  seed: number,
  pipelined: boolean,
  extra: Partial<RunOptions> & { log?: string[] } = {},
) {
  const { log = [], ...rest } = extra;
  const model = fresh(seed);
  const engine = engineOn(model, o, pipelined, log);
  return runTraining({ runDir: dir, model, task, train: o, engine, ...rest });
}

const logged = (dir: string) =>
  readFileSync(join(dir, "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => {
      const { step, loss, lr, grad_norm } = JSON.parse(l);
      return { step, loss, lr, grad_norm };
    });

describe("a pipelined engine under the Trainer and runTraining", () => {
  it("queues step k+1 before k's result; the same numbers as unpipelined", async () => {
    const run = async (pipelined: boolean) => {
      const model = fresh(1);
      const log: string[] = [];
      const t = new Trainer(model, task, o, engineOn(model, o, pipelined, log));
      const steps = [];
      while (!t.done) {
        const m = await t.nextStep({ ahead: t.step + 1 < o.steps });
        log.push(`report ${m.step}`);
        steps.push({ ...m, tokens_per_s: 0, elapsed_s: 0 });
      }
      expect(t.inFlight).toBe(0);
      await t.sync();
      return { steps, log, weights: model.parameters().map((p) => Array.from(p.tensor.data)) };
    };
    const plain = await run(false);
    const piped = await run(true);
    expect(piped.steps).toEqual(plain.steps);
    expect(piped.weights).toEqual(plain.weights);
    expect(plain.log.slice(0, 6)).toEqual(["q 1", "r 1", "report 1", "q 2", "r 2", "report 2"]);
    // step k+1 is queued before step k is reported, and step k+2 only after
    const at = (log: string[], e: string) => log.indexOf(e);
    for (let k = 1; k < o.steps; k++) {
      expect(at(piped.log, `q ${k + 1}`)).toBeLessThan(at(piped.log, `report ${k}`));
      expect(at(plain.log, `q ${k + 1}`)).toBeGreaterThan(at(plain.log, `report ${k}`));
      if (k + 2 <= o.steps)
        expect(at(piped.log, `q ${k + 2}`)).toBeGreaterThan(at(piped.log, `report ${k}`));
    }
    expect(piped.log.filter((e) => e.startsWith("q "))).toHaveLength(o.steps);
  });

  it("refuses to sync with a step in flight; drain reports it", async () => {
    const model = fresh(1);
    const t = new Trainer(model, task, o, engineOn(model, o, true, []));
    expect((await t.nextStep({ ahead: true })).step).toBe(1);
    expect(t.inFlight).toBe(1);
    await expect(t.sync()).rejects.toThrow(/sync with 1 step\(s\) in flight; drain\(\) them first/);
    expect((await t.drain()).map((m) => m.step)).toEqual([2]);
    await t.sync();
  });

  it("runTraining logs every step, checkpoints with nothing in flight, drains on interrupt", async () => {
    const full = mkdtempSync(join(tmpdir(), "run-piped-full-"));
    const fullLog: string[] = [];
    await trainIn(full, 1, true, {
      log: fullLog,
      onStep: (m) => {
        fullLog.push(`report ${m.step}`);
      },
    });
    // steps 3 (a checkpoint) and 6 (the last) are not followed by a queued step
    expect(fullLog.indexOf("q 4")).toBeGreaterThan(fullLog.indexOf("report 3"));
    expect(fullLog.indexOf("q 3")).toBeLessThan(fullLog.indexOf("report 2"));
    expect(fullLog.indexOf("q 6")).toBeLessThan(fullLog.indexOf("report 5"));
    const plainDir = mkdtempSync(join(tmpdir(), "run-plain-"));
    await trainIn(plainDir, 1, false);
    expect(logged(full)).toEqual(logged(plainDir));

    // Interrupted while step 5 is in flight (asked during step 4's report): 5 is finished,
    // logged and checkpointed.
    const cut = mkdtempSync(join(tmpdir(), "run-piped-cut-"));
    const stop = new AbortController();
    const err = await trainIn(cut, 1, true, {
      signal: stop.signal,
      onStep: (m) => {
        if (m.step === 4) stop.abort();
      },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(RunInterrupted);
    expect((err as RunInterrupted).step).toBe(5);
    expect((err as RunInterrupted).checkpoint).toMatch(/step-000005$/);
    expect(logged(cut).map((r) => r.step)).toEqual([1, 2, 3, 4, 5]);
    await trainIn(cut, 99, true, { resume: true });
    expect(logged(cut)).toEqual(logged(full));
  });
});
