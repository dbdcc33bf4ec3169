/**
 * The webgpu training step keeps one step in flight: with `nextStep({ ahead: true })` the
 * Trainer queues step k+1 — encoded and submitted — before step k's loss read has come back
 * (the context's event hook shows the order), and the losses, norms and weights are the
 * non-pipelined run's bit for bit. A non-finite step leaves the weights untouched although the
 * step after it was already queued. Dawn + SwiftShader, tiny shapes; skipped with one printed
 * line where no WebGPU adapter exists, a failure under CI.
 */
import type { LoopedModel } from "@loop/looped";
import { gpuForTests } from "@loop/test-support";
import {
  deviceStepEngine,
  deviceTraining,
  freezeForStage,
  NonFiniteError,
  resolveTrainOptions,
  Trainer,
  type TrainOptions,
} from "@loop/train";
import { gpuBackendOps } from "@loop/webgpu";
import { createNodeGpuContext } from "@loop/webgpu/node";
import { describe, expect, it } from "vitest";
import { BACKBONES, task, tinyModel } from "./gpu-tiny.test-util.js";

const ctx = await gpuForTests("webgpu step overlap", createNodeGpuContext);
const SLOW = { timeout: 600_000 };

/** A Trainer on the webgpu engine; `poisonStep` (1-based) gets a NaN loss. */
function setup(o: TrainOptions, poisonStep = 0) {
  const model = tinyModel(BACKBONES.mamba);
  freezeForStage(model, o.stage);
  const ops = gpuBackendOps(ctx!);
  const events: string[] = [];
  let submitted = -1;
  ctx!.onEvent = (e) => {
    events.push(e);
    if (e === "submit") submitted = ctx!.counters().dispatches;
  };
  // Whether every dispatch queued before a backward (the forward's) was submitted first.
  const backward = ops.backward;
  ops.backward = (loss, w) => {
    events.push(
      `backward ${ctx!.counters().dispatches === submitted ? "after submit" : "unsubmitted"}`,
    );
    backward(loss, w);
  };
  const dev = deviceTraining(model, ops, o);
  let queued = 0;
  const stageLoss = dev.stageLoss;
  const nan = ops.upload(Float32Array.of(Number.NaN), [1], { persistent: true });
  dev.stageLoss = (t, y, s) => {
    const l = stageLoss(t, y, s);
    return queued === poisonStep ? ops.binary("add", l, nan) : l;
  };
  const engine = deviceStepEngine(dev, o);
  const step = engine.step;
  // Each step's start, between the context's submits and read arrivals.
  engine.step = (b, lr) => {
    queued++;
    events.push(`step ${queued}`);
    return step(b, lr);
  };
  const trainer = new Trainer(model, task, o, engine);
  const dispose = () => {
    ctx!.onEvent = null;
    ops.dispose(nan);
    engine.dispose();
  };
  return { model, trainer, engine, events, dispose };
}

const weights = (m: LoopedModel) => m.parameters().map((p) => Array.from(p.tensor.data));

describe.runIf(ctx)("webgpu training keeps one step in flight", () => {
  it(
    "step k+1 is submitted before step k's read returns; same numbers as unpipelined",
    SLOW,
    async () => {
      const o = resolveTrainOptions({ steps: 4, batchSize: 2, gradAccum: 2, lr: 1e-2, seed: 1 });
      const run = async (ahead: boolean) => {
        const r = setup(o);
        try {
          const steps = [];
          while (!r.trainer.done)
            steps.push(await r.trainer.nextStep({ ahead: ahead && r.trainer.step + 1 < o.steps }));
          expect(r.trainer.inFlight).toBe(0);
          await r.trainer.sync();
          return { steps, events: r.events, weights: weights(r.model) };
        } finally {
          r.dispose();
        }
      };
      const plain = await run(false);
      const piped = await run(true);
      expect(piped.steps.map((s) => [s.step, s.loss, s.grad_norm])).toEqual(
        plain.steps.map((s) => [s.step, s.loss, s.grad_norm]),
      );
      expect(piped.weights).toEqual(plain.weights);

      // The k-th "read-done" is step k's report (one read per step until the final sync).
      const at = (events: string[], e: string, k: number) => {
        let seen = 0;
        const i = events.findIndex((x) => x === e && ++seen === k);
        expect(i, `${e} #${k}`).toBeGreaterThanOrEqual(0);
        return i;
      };
      for (let k = 1; k < o.steps; k++) {
        const next = at(piped.events, `step ${k + 1}`, 1);
        const readK = at(piped.events, "read-done", k);
        // step k+1 started and submitted work (its forward, then the rest) while k's read was pending
        expect(next).toBeLessThan(readK);
        expect(piped.events.slice(next, readK)).toContain("submit");
        // and no further: step k+2 waits for step k's result (one step in flight)
        if (k + 2 <= o.steps) expect(at(piped.events, `step ${k + 2}`, 1)).toBeGreaterThan(readK);
      }
      // Unpipelined: each step's read comes back before the next step starts.
      for (let k = 1; k < o.steps; k++)
        expect(at(plain.events, `step ${k + 1}`, 1)).toBeGreaterThan(
          at(plain.events, "read-done", k),
        );
      // Each micro-batch's forward is submitted before its backward is encoded.
      const backwards = piped.events.filter((e) => e.startsWith("backward"));
      expect(backwards).toEqual(Array(o.steps * o.gradAccum).fill("backward after submit"));
    },
  );

  it(
    "a non-finite step leaves the weights untouched, the step queued after it too",
    SLOW,
    async () => {
      const o = resolveTrainOptions({ steps: 4, batchSize: 2, lr: 1e-2, seed: 1 });
      const r = setup(o, 2);
      try {
        await r.trainer.nextStep({ ahead: false });
        await r.trainer.sync();
        const w1 = weights(r.model);
        const st1 = r.trainer.getState().optimizer;
        // step 2 (NaN) is queued with step 3 (finite) behind it
        await expect(r.trainer.nextStep({ ahead: true })).rejects.toThrow(NonFiniteError);
        expect(r.events.filter((e) => e.startsWith("step "))).toEqual([
          "step 1",
          "step 2",
          "step 3",
        ]);
        expect(r.trainer.inFlight).toBe(0);
        await r.trainer.sync();
        expect(weights(r.model)).toEqual(w1);
        expect(r.trainer.getState().optimizer).toEqual(st1);
      } finally {
        r.dispose();
      }
    },
  );
});
