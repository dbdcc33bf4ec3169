import { describe, expect, it } from "vitest";
import { backward } from "../autograd/backward.js";
import type { NamedParameter } from "../module.js";
import { mul, sub } from "../ops/binary.js";
import { sum } from "../ops/reduce.js";
import { tensor } from "../tensor.js";
import { AdamW } from "./adamw.js";
import { clipGradNorm, gradNorm } from "./clip.js";
import { warmupCosine } from "./schedule.js";

function quadratic(p: NamedParameter[], target: number[]): void {
  const t = tensor(target);
  for (const q of p) q.tensor.grad = null;
  const d = sub(p[0]!.tensor, t);
  backward(sum(mul(d, d)));
}

describe("AdamW", () => {
  it("matches a hand-computed first step (PyTorch semantics)", () => {
    const w = tensor([1, -2], [2], true);
    const params = [{ name: "w", tensor: w, decay: true }];
    const opt = new AdamW(params, { lr: 0.1, weightDecay: 0.5 });
    quadratic(params, [0, 0]); // g = 2w = [2, -4]
    opt.step();
    // decay: w·(1 − 0.1·0.5) then Adam step of size lr·sign(g) (first step: m̂/sqrt(v̂) = ±1)
    expect(w.data[0]).toBeCloseTo(1 * 0.95 - 0.1, 5);
    expect(w.data[1]).toBeCloseTo(-2 * 0.95 + 0.1, 5);
  });
  it("a parameter's lrScale gives it its own learning rate, weight decay included", () => {
    const w = tensor([1, -2], [2], true);
    const v = tensor([1, -2], [2], true);
    const params = [
      { name: "w", tensor: w, decay: true, lrScale: 0.25 },
      { name: "v", tensor: v, decay: true },
    ];
    const opt = new AdamW(params, { lr: 0.1, weightDecay: 0.5 });
    quadratic([params[0]!], [0, 0]);
    quadratic([params[1]!], [0, 0]);
    opt.step();
    // w at lr 0.025: decay 1 − 0.025·0.5, then a step of 0.025; v at lr 0.1 as above
    expect(w.data[0]).toBeCloseTo(1 * (1 - 0.0125) - 0.025, 6);
    expect(w.data[1]).toBeCloseTo(-2 * (1 - 0.0125) + 0.025, 6);
    expect(v.data[0]).toBeCloseTo(1 * 0.95 - 0.1, 6);
  });
  it("converges on a quadratic and skips frozen or gradient-less parameters", () => {
    const w = tensor([3, -1, 2], [3], true);
    const frozen = tensor([5], [1], false);
    const params = [
      { name: "w", tensor: w, decay: false },
      { name: "f", tensor: frozen, decay: true },
    ];
    const opt = new AdamW(params, { lr: 0.05, weightDecay: 0.1 });
    for (let i = 0; i < 400; i++) {
      quadratic(params, [1, 2, 3]);
      opt.step();
    }
    expect(Array.from(w.data).map((x) => Math.round(x * 100) / 100)).toEqual([1, 2, 3]);
    expect(frozen.data[0]).toBe(5);
  });
  it("state round-trips so a resumed optimizer continues identically", () => {
    const mk = () => {
      const w = tensor([0.5, 0.25], [2], true);
      return { w, params: [{ name: "w", tensor: w, decay: true }] };
    };
    const a = mk();
    const oa = new AdamW(a.params, { lr: 0.01 });
    for (let i = 0; i < 3; i++) {
      quadratic(a.params, [1, 1]);
      oa.step();
    }
    const b = mk();
    b.w.data.set(a.w.data);
    const ob = new AdamW(b.params, { lr: 0.01 });
    ob.setState(oa.getState());
    quadratic(a.params, [1, 1]);
    oa.step();
    quadratic(b.params, [1, 1]);
    ob.step();
    expect(Array.from(b.w.data)).toEqual(Array.from(a.w.data));
    expect(() => ob.setState({ step: 1, m: { nope: new Float32Array(2) }, v: {} })).toThrow(
      /unknown parameter "nope"/,
    );
  });
  it("rejects bad hyper-parameters", () => {
    expect(() => new AdamW([], { lr: -1 })).toThrow(/lr/);
    expect(() => new AdamW([], { beta1: 1 })).toThrow(/beta1/);
  });
});

describe("clipping and schedule", () => {
  it("clips the global norm", () => {
    const a = tensor([0, 0], [2], true);
    const b = tensor([0], [1], true);
    a.grad = Float32Array.of(3, 0);
    b.grad = Float32Array.of(4);
    const ps = [
      { name: "a", tensor: a, decay: true },
      { name: "b", tensor: b, decay: true },
    ];
    expect(clipGradNorm(ps, 1)).toBeCloseTo(5, 6);
    expect(gradNorm(ps)).toBeCloseTo(1, 4);
    b.grad = Float32Array.of(Number.NaN);
    expect(clipGradNorm(ps, 1)).toBeNaN();
  });
  it("warmup then cosine", () => {
    const f = warmupCosine({ peakLr: 1, warmupSteps: 4, totalSteps: 14, minLr: 0.1 });
    expect(f(0)).toBeCloseTo(0.25);
    expect(f(3)).toBeCloseTo(1);
    expect(f(4)).toBeCloseTo(1);
    expect(f(9)).toBeCloseTo(0.55);
    expect(f(14)).toBeCloseTo(0.1);
    expect(f(100)).toBeCloseTo(0.1);
    expect(() => warmupCosine({ peakLr: 0, warmupSteps: 0, totalSteps: 1 })).toThrow(/peakLr/);
  });
});
