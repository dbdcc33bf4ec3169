import { gradcheck, linear, noGrad, Rng, reshape, stack, tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { ExitGate } from "./exit-gate.js";
import { gateLogits } from "./gate-logits.js";

describe("gateLogits", () => {
  const R = 3;
  const readouts = [0, 1, 2].map((r) => randn([2, 4, 5], 10 + r));
  const weight = randn([1, 5], 20);
  const bias = randn([1], 21);

  it("matches R linears stacked step-major", () => {
    const a = gateLogits(readouts, weight, bias);
    expect(a.shape).toEqual([R, 2, 4]);
    const ref = noGrad(() => stack(readouts.map((x) => reshape(linear(x, weight, bias), [2, 4]))));
    for (let i = 0; i < ref.size; i++) expect(a.data[i]).toBeCloseTo(ref.data[i]!, 5);
  });

  it("gradient (readouts, weight, bias)", () => {
    gradcheck(() => gateLogits(readouts, weight, bias), [...readouts, weight, bias]);
  });

  it("skips input gradients nobody needs", () => {
    const frozen = readouts.map((x) => tensor(x.data, x.shape, false));
    weight.grad = null;
    gradcheck(() => gateLogits(frozen, weight, bias), [weight, bias]);
    expect(frozen.every((x) => x.grad === null)).toBe(true);
  });

  it("rejects bad shapes naming the argument", () => {
    expect(() => gateLogits([], weight, bias)).toThrow(/readouts must hold at least one/);
    expect(() => gateLogits([readouts[0]!, randn([2, 4, 6], 1)], weight, bias)).toThrow(
      /readouts\[1\] has shape \[2,4,6\], expected \[2,4,5\]/,
    );
    expect(() => gateLogits(readouts, randn([5], 1), bias)).toThrow(
      /weight has shape \[5\], expected \[1,5\]/,
    );
    expect(() => gateLogits(readouts, weight, randn([2], 1))).toThrow(
      /bias has shape \[2\], expected \[1\]/,
    );
  });
});

describe("ExitGate", () => {
  it("names, shapes and init", () => {
    const gate = new ExitGate({ dModel: 64 }, { rng: new Rng(3) });
    const ps = gate.parameters();
    expect(ps.map((p) => [p.name, p.tensor.shape, p.decay])).toEqual([
      ["weight", [1, 64], true],
      ["bias", [1], false],
    ]);
    const bound = 1 / 8;
    expect(gate.weight.data.every((w) => Math.abs(w) <= bound)).toBe(true);
    expect(Math.max(...gate.weight.data)).toBeGreaterThan(bound / 2);
    expect(gate.bias.data[0]).toBe(0);
    expect(gate.weight.requiresGrad && gate.bias.requiresGrad).toBe(true);
  });

  it("is deterministic for a seed", () => {
    const a = new ExitGate({ dModel: 8 }, { rng: new Rng(5) });
    const b = new ExitGate({ dModel: 8 }, { rng: new Rng(5) });
    expect(Array.from(a.weight.data)).toEqual(Array.from(b.weight.data));
  });

  it("lambda = sigmoid(logits) in (0, 1)", () => {
    const gate = new ExitGate({ dModel: 5 }, { rng: new Rng(1) });
    const xs = [randn([2, 3, 5], 1), randn([2, 3, 5], 2)];
    const a = gate.logits(xs);
    const lam = gate.lambda(xs);
    expect(lam.shape).toEqual([2, 2, 3]);
    for (let i = 0; i < a.size; i++) {
      expect(lam.data[i]).toBeCloseTo(1 / (1 + Math.exp(-a.data[i]!)), 6);
    }
  });

  it("rejects a bad dModel", () => {
    expect(() => new ExitGate({ dModel: 0 }, { rng: new Rng(1) })).toThrow(/dModel/);
  });
});
