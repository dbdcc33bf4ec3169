import { backward, intTensor, noGrad, Rng } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { ExitGate } from "./exit-gate.js";
import { exitPdf } from "./exit-pdf.js";
import { gateOutputs } from "./gate-outputs.js";
import { stage1Loss } from "./stage1.js";
import { stage2Loss } from "./stage2.js";
import { ToyLooped } from "./testing/toy-looped.js";
import { thresholdExit } from "./threshold-exit.js";

describe("gateOutputs", () => {
  const R = 3;
  const model = new ToyLooped(8, 6, R, 21);
  const gate = new ExitGate({ dModel: 6 }, { rng: new Rng(22) });
  const tokens = intTensor([1, 2, 3, 4, 5, 6, 7, 0], [2, 4]);
  const targets = intTensor([2, 3, -100, 5, 6, 7, 0, -100], [2, 4]);
  const opts = { beta: 0.1, k: 40, gamma: 0.01, qs: [0.25, 0.5, 1] };

  it("produces the docs/formats.md tensors with their names and shapes", () => {
    const { readouts, logits } = model.forward(tokens);
    const out = gateOutputs(readouts, logits, targets, gate, opts);
    expect([...out.tensors.keys()]).toEqual([
      "gate.lambda",
      "exit.pdf",
      "loss.stage1",
      "loss.stage2",
      "exit.step.q0.25",
      "exit.step.q0.5",
      "exit.step.q1",
    ]);
    expect(out.tensors.get("gate.lambda")!.shape).toEqual([R, 2, 4]);
    expect(out.tensors.get("exit.pdf")!.shape).toEqual([R, 2, 4]);
    expect(out.tensors.get("loss.stage1")!.shape).toEqual([1]);
    expect(out.tensors.get("exit.step.q0.5")!.shape).toEqual([2, 4]);
    expect(Array.from(out.tensors.get("exit.step.q1")!.data)).toEqual(new Array(8).fill(R));
  });

  it("agrees with the individual functions", () => {
    const { readouts, logits } = noGrad(() => model.forward(tokens));
    const out = gateOutputs(readouts, logits, targets, gate, opts);
    const a = noGrad(() => gate.logits(readouts));
    const lam = noGrad(() => gate.lambda(readouts));
    const p = noGrad(() => exitPdf(a));
    expect(Array.from(out.lambda.data)).toEqual(Array.from(lam.data));
    expect(Array.from(out.pdf.data)).toEqual(Array.from(p.data));
    expect(out.stage1.item()).toBe(stage1Loss(a, logits, targets, { beta: 0.1 }).item());
    expect(out.stage2.item()).toBe(
      stage2Loss(gate, readouts, logits, targets, { k: 40, gamma: 0.01 }).item(),
    );
    for (const { q, steps } of out.exitSteps) {
      expect(Array.from(steps.data)).toEqual(Array.from(thresholdExit(p, q).data));
    }
  });

  it("stage 1 trains everything, stage 2 only the gate", () => {
    const params = [...model.parameters(), ...gate.parameters()];
    for (const p of params) p.tensor.grad = null;
    const { readouts, logits } = model.forward(tokens);
    const out = gateOutputs(readouts, logits, targets, gate, opts);
    expect(out.lambda.requiresGrad || out.pdf.requiresGrad).toBe(false);
    backward(out.stage1);
    for (const p of params) expect(p.tensor.grad!.some((g) => g !== 0)).toBe(true);
    for (const p of params) p.tensor.grad = null;
    backward(out.stage2);
    for (const p of model.parameters()) expect(p.tensor.grad).toBeNull();
    for (const p of gate.parameters()) expect(p.tensor.grad).not.toBeNull();
  });

  it("defaults: β 0.05, k 50, γ 0.005, no thresholds", () => {
    const { readouts, logits } = noGrad(() => model.forward(tokens));
    const out = gateOutputs(readouts, logits, targets, gate);
    const a = noGrad(() => gate.logits(readouts));
    expect(out.stage1.item()).toBe(stage1Loss(a, logits, targets, { beta: 0.05 }).item());
    expect(out.stage2.item()).toBe(stage2Loss(gate, readouts, logits, targets).item());
    expect(out.exitSteps).toEqual([]);
  });
});
