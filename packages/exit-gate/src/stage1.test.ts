import { gradcheck, intTensor, noGrad, tensor } from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { perStepCrossEntropy } from "./per-step-ce.js";
import { stage1Loss, stage1Objective } from "./stage1.js";

/** Plain float64 re-implementation of docs/exit-gate.md stage 1 from the formulas. */
function stage1Ref(
  a: ArrayLike<number>,
  ce: ArrayLike<number>,
  targets: ArrayLike<number>,
  R: number,
  beta: number,
): number {
  const M = targets.length;
  let total = 0;
  let n = 0;
  for (let m = 0; m < M; m++) {
    if (targets[m] === -100) continue;
    n++;
    const lam = Array.from({ length: R }, (_, r) => 1 / (1 + Math.exp(-a[r * M + m]!)));
    let surv = 1;
    const p: number[] = [];
    for (let r = 0; r < R; r++) {
      p.push(r === R - 1 ? surv : lam[r]! * surv);
      surv *= 1 - lam[r]!;
    }
    let expected = 0;
    let h = 0;
    for (let r = 0; r < R; r++) {
      expected += p[r]! * ce[r * M + m]!;
      if (p[r]! > 0) h -= p[r]! * Math.log(p[r]!);
    }
    total += expected - beta * h;
  }
  return total / n;
}

describe("stage1Objective", () => {
  const R = 4;
  const a = randn([R, 2, 3], 1, { std: 1.5 });
  const ce = randn([R, 2, 3], 2, { std: 1 });
  ce.data.forEach((v, i) => {
    ce.data[i] = Math.abs(v) + 0.5;
  });
  const targets = intTensor([1, -100, 0, 2, 3, -100], [2, 3]);

  it("matches a float64 re-implementation of the formula", () => {
    for (const beta of [0, 0.05, 0.1, 1]) {
      const L = stage1Objective(a, ce, targets, beta);
      expect(L.shape).toEqual([1]);
      expect(L.item()).toBeCloseTo(stage1Ref(a.data, ce.data, targets.data, R, beta), 5);
    }
  });

  it("default β is 0.05", () => {
    expect(stage1Objective(a, ce, targets).item()).toBeCloseTo(
      stage1Ref(a.data, ce.data, targets.data, R, 0.05),
      5,
    );
  });

  it("gradient (gate logits and per-step losses)", () => {
    gradcheck(() => stage1Objective(a, ce, targets, 0.3), [a, ce]);
  });

  it("ignored positions and λ(R) get no gradient", () => {
    gradcheck(() => stage1Objective(a, ce, targets, 0.05), [a, ce]);
    const M = 6;
    for (let r = 0; r < R; r++) {
      for (const m of [1, 5]) {
        expect(a.grad![r * M + m]).toBe(0);
        expect(ce.grad![r * M + m]).toBe(0);
      }
    }
    for (let m = 0; m < M; m++) expect(a.grad![(R - 1) * M + m]).toBe(0);
  });

  it("is NaN with zero gradients when every target is ignored", () => {
    const none = intTensor([-100, -100, -100, -100, -100, -100], [2, 3]);
    const L = stage1Objective(a, ce, none);
    expect(Number.isNaN(L.item())).toBe(true);
  });

  it("rejects bad shapes naming the argument", () => {
    expect(() => stage1Objective(a, randn([R, 3, 2], 1), targets)).toThrow(
      /ce has shape \[4,3,2\], expected \[4,2,3\]/,
    );
    expect(() => stage1Objective(a, ce, intTensor([1, 2, 3], [3]))).toThrow(
      /targets has shape \[3\], expected \[2,3\]/,
    );
    expect(() => stage1Objective(a, ce, targets, Number.NaN)).toThrow(/beta must be a finite/);
  });
});

describe("stage1Loss", () => {
  const R = 3;
  const V = 5;
  const logits = [0, 1, 2].map((r) => randn([2, 3, V], 30 + r));
  const a = randn([R, 2, 3], 40);
  const targets = intTensor([4, 0, -100, 2, 1, 3], [2, 3]);

  it("equals the objective on the per-step cross-entropies", () => {
    const ce = noGrad(() => perStepCrossEntropy(logits, targets));
    expect(ce.shape).toEqual([R, 2, 3]);
    const want = stage1Ref(a.data, ce.data, targets.data, R, 0.05);
    expect(stage1Loss(a, logits, targets).item()).toBeCloseTo(want, 5);
  });

  it("gradient reaches every step's logits and the gate", () => {
    gradcheck(() => stage1Loss(a, logits, targets, { beta: 0.1 }), [a, ...logits]);
    for (const l of logits) expect(l.grad!.some((g) => g !== 0)).toBe(true);
  });

  it("rejects a step-count mismatch", () => {
    expect(() => stage1Loss(a, logits.slice(0, 2), targets)).toThrow(
      /logitsPerStep has 2 steps, expected R = 3/,
    );
    expect(() => stage1Loss(a, [logits[0]!, logits[1]!, tensor([1, 2], [1, 2])], targets)).toThrow(
      /logitsPerStep\[2\] has shape \[1,2\]/,
    );
  });
});
