/*
 * The optimiser's slice of the op cases: one whole step of `TrainOps` (gradNorm, clipGrads,
 * adamw, and a step report joined by concat) on gradients made by a backward.
 */
import type { AdamWStepConstants } from "@loop/tensor";
import type { AnyOps, OpCase, Rows } from "./case-types.js";
import { f } from "./inputs.js";

/** The fixed AdamW constants of the optimiser case (step 3, lr 1e-2, weight decay 0.1). */
const ADAMW: AdamWStepConstants = {
  decay: 1 - 1e-2 * 0.1,
  stepSize: 1e-2 / (1 - 0.9 ** 3),
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  sc2: 1 / Math.sqrt(1 - 0.999 ** 3),
};

/** The optimiser's case at row count `r`. */
export function optimizerCases(r: Rows): OpCase[] {
  return [
    {
      name: "gradNorm, clipGrads, adamw, a report: one optimiser step",
      op: "TrainOps",
      inputs: [f("p", [r(1000) + 7]), f("q", [13])],
      run: (ops, [p, q]) => {
        // gradients from a backward (the only way a generic caller gives a tensor one)
        const n = ops.shapeOf(p)[0]!;
        const loss = ops.binary("add", dot(ops, p, n, 0.5), dot(ops, q, 13, -2));
        // (copied before the backward, which may give the loss's block back, as a step does)
        const kept = ops.noGrad(() => ops.affine(loss, 1, 0));
        ops.backward(loss, 1);
        const norm = ops.gradNorm([p, q]);
        ops.clipGrads([p, q], norm, 1);
        const m = ops.zeros([n]);
        const v = ops.zeros([n]);
        ops.adamw(p, m, v, ADAMW);
        const report = ops.noGrad(() => ops.concat([kept, norm], 0));
        return [norm, p, m, v, report];
      },
      tol: { atol: 2e-6, rtol: 2e-5 },
      backward: false,
    },
  ];
}

/** The one-element Σ x·c of a flat [n] tensor, through the contract's ops (a linear). */
function dot(ops: AnyOps, x: unknown, n: number, c: number): unknown {
  const w = ops.upload(new Float32Array(n).fill(c), [1, n]);
  return ops.reshape(ops.linear(ops.reshape(x, [1, n]), w), [1]);
}
