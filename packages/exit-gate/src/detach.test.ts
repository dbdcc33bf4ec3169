import { backward, intTensor, Rng } from "@loop/tensor";
import { describe, expect, it } from "vitest";
import { detach, freeze, unfreeze } from "./detach.js";
import { ExitGate } from "./exit-gate.js";
import { stage1Loss } from "./stage1.js";
import { ToyLooped } from "./testing/toy-looped.test-util.js";

describe("detach", () => {
  it("shares storage, drops the graph and the gradient flag", () => {
    const model = new ToyLooped(5, 4, 2, 1);
    const { readouts } = model.forward(intTensor([0, 1, 2], [1, 3]));
    const x = readouts[0]!;
    const d = detach(x);
    expect(d.data).toBe(x.data);
    expect(d.shape).toEqual(x.shape);
    expect(d.requiresGrad).toBe(false);
    expect(d.node).toBeNull();
    expect(x.requiresGrad).toBe(true);
  });
});

describe("freeze / unfreeze", () => {
  const model = new ToyLooped(6, 4, 3, 2);
  const gate = new ExitGate({ dModel: 4 }, { rng: new Rng(3) });
  const tokens = intTensor([0, 1, 2, 3, 4, 5], [2, 3]);
  const targets = intTensor([1, 2, 3, 4, 5, -100], [2, 3]);
  const all = () => [...model.parameters(), ...gate.parameters()];

  it("frozen parameters get no gradient from a loss that reaches them", () => {
    for (const p of all()) p.tensor.grad = null;
    freeze(model.parameters());
    const { readouts, logits } = model.forward(tokens);
    const L = stage1Loss(gate.logits(readouts), logits, targets);
    backward(L);
    for (const p of model.parameters()) {
      expect(p.tensor.requiresGrad).toBe(false);
      expect(p.tensor.grad).toBeNull();
    }
    expect(gate.weight.grad!.some((g) => g !== 0)).toBe(true);
    // Nothing upstream of the readouts was recorded.
    expect(readouts.every((r) => !r.requiresGrad)).toBe(true);
  });

  it("unfreeze restores training; freeze drops stale gradients", () => {
    unfreeze(model.parameters());
    for (const p of all()) p.tensor.grad = null;
    const { readouts, logits } = model.forward(tokens);
    backward(stage1Loss(gate.logits(readouts), logits, targets));
    for (const p of model.parameters()) expect(p.tensor.grad).not.toBeNull();
    freeze([gate.weight, gate.bias]);
    expect(gate.weight.grad).toBeNull();
    expect(gate.bias.requiresGrad).toBe(false);
    unfreeze(gate.parameters());
    expect(gate.bias.requiresGrad).toBe(true);
  });

  it("unfreeze rejects computed tensors", () => {
    const { readouts } = model.forward(tokens);
    expect(() => unfreeze([readouts[0]!])).toThrow(/computed by op rmsnorm, expected leaves/);
  });
});
