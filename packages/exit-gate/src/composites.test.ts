/*
 * The exit gate's ops and objectives composed over kernels (gate-on.ts, stage-losses-on.ts) on
 * the CPU's kernels, against the CPU model's fused float64 ops: values and every gradient, for
 * one to five loop steps, ignored targets and gate logits far in the tails.
 */
import {
  backward,
  cpuTensorOps,
  cpuTransferOps,
  intTensor,
  noGrad,
  type Tensor,
} from "@loop/tensor";
import { randn } from "@loop/tensor/internal";
import { describe, expect, it } from "vitest";
import { exitPdf } from "./exit-pdf.js";
import { gateLogits } from "./gate-logits.js";
import { exitPdfOn, gateLogitsOn } from "./gate-on.js";
import { stage1LossOn, stage2LossOn } from "./stage-losses-on.js";
import { stage1Loss } from "./stage1.js";
import { stage2Loss } from "./stage2.js";

const ops = { ...cpuTransferOps, ...cpuTensorOps, noGrad };

function leaf(shape: number[], seed: number, std = 1): Tensor {
  const t = randn(shape, seed, { std });
  t.requiresGrad = true;
  return t;
}

/** Gradients of `inputs` from `out` (summed against fixed weights when out has many values). */
function grads(out: Tensor, inputs: readonly Tensor[]): Float32Array[] {
  for (const t of inputs) t.grad = null;
  const seed = Float32Array.from({ length: out.size }, (_, i) => Math.cos(i));
  backward(out, [seed]);
  return inputs.map((t) => Float32Array.from(t.grad ?? new Float32Array(t.size)));
}

function close(got: ArrayLike<number>, want: ArrayLike<number>, tol: number): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    if (Number.isNaN(w)) expect(got[i]).toBeNaN();
    else expect(Math.abs(got[i]! - w)).toBeLessThanOrEqual(tol * (1 + Math.abs(w)));
  }
}

const targets = intTensor([1, -100, 0, 4, 3, -100], [2, 3]);

describe("exit gate composed over kernels = the CPU's fused ops", () => {
  for (const R of [1, 2, 3, 5]) {
    it(`gateLogits and exitPdf, R = ${R}`, () => {
      const readouts = Array.from({ length: R }, (_, r) => leaf([2, 3, 8], 10 + r));
      const w = leaf([1, 8], 3, 2);
      const b = leaf([1], 4);
      const inputs = [...readouts, w, b];
      const fused = exitPdf(gateLogits(readouts, w, b));
      const want = grads(fused, inputs);
      const composed = exitPdfOn(ops, gateLogitsOn(ops, readouts, w, b));
      expect(composed.shape).toEqual([R, 2, 3]);
      close(composed.data, fused.data, 1e-5);
      for (const [i, g] of grads(composed, inputs).entries()) close(g, want[i]!, 1e-4);
    });

    it(`stage1Loss, R = ${R}, logits far in the tails`, () => {
      const a = leaf([R, 2, 3], 20 + R, 12);
      const logits = Array.from({ length: R }, (_, r) => leaf([2, 3, 5], 30 + r, 2));
      const inputs = [a, ...logits];
      const fused = stage1Loss(a, logits, targets, { beta: 0.1 });
      const want = grads(fused, inputs);
      const composed = stage1LossOn(ops, a, logits, targets, { beta: 0.1 });
      close(composed.data, fused.data, 1e-5);
      for (const [i, g] of grads(composed, inputs).entries()) close(g, want[i]!, 1e-4);
    });

    it(`stage2Loss, R = ${R}: only the gate's parameters get gradients`, () => {
      const readouts = Array.from({ length: R }, (_, r) => leaf([2, 3, 8], 40 + r));
      const logits = Array.from({ length: R }, (_, r) => leaf([2, 3, 5], 50 + r, 2));
      const w = leaf([1, 8], 5, 2);
      const b = leaf([1], 6);
      const inputs = [w, b, ...readouts, ...logits];
      const fusedGate = { logits: (rs: readonly Tensor[]) => gateLogits(rs, w, b) };
      const fused = stage2Loss(fusedGate, readouts, logits, targets, { k: 5, gamma: 0.01 });
      const want = grads(fused, inputs);
      const gate = { logits: (rs: readonly Tensor[]) => gateLogitsOn(ops, rs, w, b) };
      const composed = stage2LossOn(ops, gate, readouts, logits, targets, { k: 5, gamma: 0.01 });
      close(composed.data, fused.data, 1e-5);
      const got = grads(composed, inputs);
      for (const [i, g] of got.entries()) close(g, want[i]!, 1e-4);
      for (const g of got.slice(2)) expect(g.every((v) => v === 0)).toBe(true);
    });
  }

  it("every target ignored: NaN, as the fused ops", () => {
    const none = intTensor([-100, -100], [1, 2]);
    const a = leaf([3, 1, 2], 7);
    const logits = Array.from({ length: 3 }, (_, r) => leaf([1, 2, 4], 60 + r));
    expect(stage1LossOn(ops, a, logits, none).data[0]).toBeNaN();
    const gate = { logits: () => a };
    expect(stage2LossOn(ops, gate, logits, logits, none).data[0]).toBeNaN();
  });

  it("a wrong number of steps is refused by name", () => {
    const a = leaf([3, 2, 3], 8);
    const logits = [leaf([2, 3, 5], 9)];
    expect(() => stage1LossOn(ops, a, logits, targets)).toThrow(/stage1Loss.*expected R = 3/);
  });
});
