import { backward, gradcheck, intTensor, noGrad, Rng, tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { ExitGate } from "./exit-gate.js";
import { perStepCrossEntropy } from "./per-step-ce.js";
import { continuationLabels, stage2Loss, stage2Objective } from "./stage2.js";
import { ToyLooped } from "./testing/toy-looped.test-util.js";

/** Plain float64 re-implementation of docs/exit-gate.md stage 2 from the formulas. */
function stage2Ref(
  a: ArrayLike<number>,
  ce: ArrayLike<number>,
  targets: ArrayLike<number>,
  R: number,
  k: number,
  gamma: number,
): number {
  const M = targets.length;
  const n = Array.from(targets).filter((t) => t !== -100).length;
  let L2 = 0;
  for (let r = 1; r < R; r++) {
    let Lr = 0;
    for (let m = 0; m < M; m++) {
      if (targets[m] === -100) continue;
      const I = Math.max(0, ce[(r - 1) * M + m]! - ce[r * M + m]!);
      const w = 1 / (1 + Math.exp(-k * (I - gamma)));
      const lam = 1 / (1 + Math.exp(-a[r * M + m]!));
      Lr -= w * Math.log(1 - lam) + (1 - w) * Math.log(lam);
    }
    L2 += Lr / n;
  }
  return L2 / R;
}

describe("stage2Objective", () => {
  const R = 4;
  const a = randn([R, 2, 3], 1, { std: 1.5 });
  // Per-step losses with improvements around γ so the labels are not all 0 or 1.
  const ce = tensor(new Rng(2).fillUniform(new Float32Array(R * 6), 2, 2.03), [R, 2, 3], false);
  const targets = intTensor([1, -100, 0, 2, 3, -100], [2, 3]);

  it("matches a float64 re-implementation of the formula", () => {
    for (const [k, gamma] of [
      [50, 0.005],
      [10, 0],
      [200, 0.01],
    ] as const) {
      const L = stage2Objective(a, ce, targets, k, gamma);
      expect(L.item()).toBeCloseTo(stage2Ref(a.data, ce.data, targets.data, R, k, gamma), 5);
    }
    expect(stage2Objective(a, ce, targets).item()).toBeCloseTo(
      stage2Ref(a.data, ce.data, targets.data, R, 50, 0.005),
      5,
    );
  });

  it("labels: w = sigmoid(k·(max(0, ℓ(r−1) − ℓ(r)) − γ))", () => {
    // One token, R = 3: improvements 0.5 and 0 (a worse step clamps to 0).
    const w = continuationLabels([3, 2.5, 2.7], 3, 1, 50, 0.005);
    expect(w[0]).toBe(0);
    expect(w[1]).toBeCloseTo(1 / (1 + Math.exp(-50 * 0.495)), 8);
    expect(w[2]).toBeCloseTo(1 / (1 + Math.exp(50 * 0.005)), 8);
  });

  it("gradient, zero at step 1 and at ignored positions", () => {
    gradcheck(() => stage2Objective(a, ce, targets), [a]);
    const M = 6;
    for (let m = 0; m < M; m++) expect(a.grad![m]).toBe(0);
    for (let r = 0; r < R; r++) for (const m of [1, 5]) expect(a.grad![r * M + m]).toBe(0);
    // λ(R) is included: the last step has a gradient.
    expect(a.grad![(R - 1) * M]).not.toBe(0);
  });

  it("is finite for saturated gate logits", () => {
    const big = tensor([0, 0, 60, -60, 200, -200], [3, 2]);
    const L = stage2Objective(big, tensor([1, 1, 1, 1, 1, 1], [3, 2]), intTensor([0, 0], [2]));
    expect(Number.isFinite(L.item())).toBe(true);
  });

  it("is NaN when every target is ignored", () => {
    const none = intTensor([-100, -100, -100, -100, -100, -100], [2, 3]);
    expect(Number.isNaN(stage2Objective(a, ce, none).item())).toBe(true);
  });

  it("rejects bad shapes and settings naming the argument", () => {
    expect(() => stage2Objective(a, randn([3, 2, 3], 1), targets)).toThrow(
      /ce has shape \[3,2,3\], expected \[4,2,3\]/,
    );
    expect(() => stage2Objective(a, ce, intTensor([1], [1]))).toThrow(/targets has shape \[1\]/);
    expect(() => stage2Objective(a, ce, targets, Number.POSITIVE_INFINITY)).toThrow(/k must be/);
    expect(() => stage2Objective(a, ce, targets, 50, Number.NaN)).toThrow(/gamma must be/);
  });
});

describe("stage2Loss on a looped model", () => {
  const model = new ToyLooped(7, 6, 3, 11);
  const gate = new ExitGate({ dModel: 6 }, { rng: new Rng(12) });
  const tokens = intTensor([1, 2, 3, 4, 5, 6, 0, 1], [2, 4]);
  const targets = intTensor([2, 3, -100, 5, 6, 0, 1, -100], [2, 4]);

  it("equals the objective on detached per-step losses and gate logits", () => {
    const { readouts, logits } = model.forward(tokens);
    const L = stage2Loss(gate, readouts, logits, targets);
    const ce = noGrad(() => perStepCrossEntropy(logits, targets));
    const a = noGrad(() => gate.logits(readouts));
    expect(L.item()).toBeCloseTo(stage2Ref(a.data, ce.data, targets.data, 3, 50, 0.005), 5);
  });

  it("gradient reaches only the gate: backbone and head get grad === null", () => {
    for (const p of [...model.parameters(), ...gate.parameters()]) p.tensor.grad = null;
    const { readouts, logits } = model.forward(tokens);
    const L = stage2Loss(gate, readouts, logits, targets, { k: 50, gamma: 0.005 });
    // The loss's graph holds exactly one path: the gate on detached readouts.
    expect(L.node!.inputs.map((t) => t.node?.op)).toEqual(["gateLogits"]);
    const gateInputs = L.node!.inputs[0]!.node!.inputs;
    expect(gateInputs.slice(0, 3).every((x) => !x.requiresGrad && x.node === null)).toBe(true);
    backward(L);
    for (const p of model.parameters()) expect(p.tensor.grad).toBeNull();
    for (const x of [...readouts, ...logits]) expect(x.grad).toBeNull();
    expect(gate.weight.grad!.some((g) => g !== 0)).toBe(true);
    expect(gate.bias.grad![0]).not.toBe(0);
  });

  it("gradient check through the gate parameters", () => {
    const { readouts, logits } = noGrad(() => model.forward(tokens));
    gradcheck(() => stage2Loss(gate, readouts, logits, targets), [gate.weight, gate.bias]);
  });

  it("rejects a step-count mismatch", () => {
    const { readouts, logits } = noGrad(() => model.forward(tokens));
    expect(() => stage2Loss(gate, readouts, logits.slice(1), targets)).toThrow(
      /logitsPerStep has 2 steps, expected 3 like readouts/,
    );
  });
});
